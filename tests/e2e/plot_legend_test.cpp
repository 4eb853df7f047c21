// SPDX-License-Identifier: Apache-2.0
// qprof plot end to end: an overlay's key names every run in full where it fits, by what tells the
// runs apart where their names share a long part, never two alike, and wraps rather than cuts.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "e2e_util.hpp"
#include "plot_util.hpp"

namespace qprof::test {
namespace {

using namespace plot_files;  // NOLINT: the fixtures are this file's vocabulary
namespace fs = std::filesystem;

// Three runs whose file names differ only at their end.
std::vector<std::string> three_seeds(const std::string& dir) {
  std::vector<std::string> out;
  for (const char* seed : {"1", "2", "3"}) {
    out.push_back(dir + "/experiment_resnet50_batch64_lr0.01_seed" + seed + ".dat");
    fs::copy_file(plot_data("full.dat"), out.back(), fs::copy_options::overwrite_existing);
  }
  return out;
}

std::size_t code_points(const std::string& line) {
  std::size_t n = 0;
  for (unsigned char c : line) n += (c & 0xC0) != 0x80;
  return n;
}

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(PlotLegend, AnImageKeyNamesEachRunInFullWithItsWholePeak) {
  const std::string dir = test_dir();
  std::vector<std::string> args{"plot", "-o", dir + "/o.svg"};
  for (const std::string& f : three_seeds(dir)) args.push_back(f);
  const Result r = qprof(args);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string text = svg_text(dir + "/o.svg");
  for (const char* seed : {"1", "2", "3"}) {
    EXPECT_TRUE(has(text, std::string("experiment_resnet50_batch64_lr0.01_seed") + seed + ",")) << text;
  }
  // The peak, on the entry's next line, whole: nothing of the key is cut.
  EXPECT_GE(count(text, "footprint peak 5.60 GiB at 6 s"), 3u) << text;
  EXPECT_FALSE(has(text, "footpr…")) << text;
}

TEST(PlotLegend, ATextKeyKeepsWhatTellsTheRunsApartAndWrapsInsteadOfCutting) {
  const std::string dir = test_dir();
  std::vector<std::string> args{"plot", "-o", "-", "--size", "80x32"};
  for (const std::string& f : three_seeds(dir)) args.push_back(f);
  const Result r = qprof(args);
  ASSERT_EQ(r.status, 0) << r.err;
  // gnuplot's own dumb terminal drew it: every run's distinguishing name is in the key.
  for (const char* seed : {"…seed1,", "…seed2,", "…seed3,"}) EXPECT_EQ(count(r.out, seed), 2u) << seed << "\n" << r.out;
  EXPECT_GE(count(r.out, "peak 5.60 GiB"), 3u) << r.out;
  EXPECT_FALSE(has(r.out, "experiment_resne…")) << r.out;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_LE(code_points(line), 80u) << line;
  }
}

TEST(PlotLegend, RunsOfOneNameInOtherFoldersAndEqualLabelsAreToldApart) {
  const std::string dir = test_dir();
  for (const char* sub : {"/a", "/b"}) {
    fs::create_directories(dir + sub);
    fs::copy_file(plot_data("full.dat"), dir + sub + "/run.dat", fs::copy_options::overwrite_existing);
  }
  Result r = qprof({"plot", "-o", dir + "/o.svg", dir + "/a/run.dat", dir + "/b/run.dat"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string text = svg_text(dir + "/o.svg");
  EXPECT_TRUE(has(text, "a/run, footprint peak")) << text;
  EXPECT_TRUE(has(text, "b/run, footprint peak")) << text;

  // Two equal labels (quotes and all: a label is data, never gnuplot code) get their place.
  r = qprof(
      {"plot", "-o", dir + "/l.svg", "--label", "x\"y", "--label", "x\"y", dir + "/a/run.dat", dir + "/b/run.dat"});
  ASSERT_EQ(r.status, 0) << r.err;
  text = svg_text(dir + "/l.svg");
  EXPECT_TRUE(has(text, "x\"y #1, footprint peak")) << text;
  EXPECT_TRUE(has(text, "x\"y #2, footprint peak")) << text;
}

}  // namespace
}  // namespace qprof::test
