// SPDX-License-Identifier: Apache-2.0
// qprof plot end to end: an overlay's key names every run in full where it fits, by what tells the
// runs apart where their names share a long part, never two alike, and wraps rather than cuts.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
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

// full.dat with a limit far above it (the machine's MemTotal, as a run without a cgroup says).
std::string with_limit(const std::string& path, const std::string& bytes) {
  std::ifstream in(plot_data("full.dat"));
  std::string header, rest;
  std::getline(in, header);
  std::ostringstream body;
  body << in.rdbuf();
  std::ofstream(path) << header << " limit=" << bytes << " limit_source=memtotal\n" << body.str();
  return path;
}

// Three facets into a pipe (no --size): the text chart grows until each panel holds its key, every
// entry named (32 rows had cut each key to its marks, a second column unnamed), and the machine's
// limit is said once under it; limits that differ are said with their panels' names.
TEST(PlotLegend, TextFacetsHoldEachKeyWholeAndSayASharedLimitOnce) {
  const std::string dir = test_dir();
  std::vector<std::string> args{"plot", "--facet", "-o", "-"};
  for (const char* name : {"/r0.dat", "/r1.dat", "/r2.dat"}) args.push_back(with_limit(dir + name, "214748364800"));
  Result r = qprof(args);
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* entry : {"footprint (cgroup", "Σ RSS (mprof's", "largest process,", "sum of VmHWM"}) {
    EXPECT_EQ(count(r.out, entry), 3u) << entry << "\n" << r.out;
  }
  EXPECT_EQ(count(r.out, "memtotal limit 200.0 GiB (off the chart)"), 1u) << r.out;
  // Each facet's title, the axis label and the note on rows of their own, none under a frame.
  for (const char* own : {"          r0 — python3", "          r1 — python3", "          r2 — python3",
                          "                time from start (s)\n", "\nmemtotal limit 200.0 GiB"}) {
    EXPECT_EQ(count(r.out, own), 1u) << own << "\n" << r.out;
  }
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(code_points(line), 80u) << line;

  args.back() = with_limit(dir + "/r2.dat", "322122547200");
  r = qprof(args);
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* said :
       {"r0: memtotal limit 200.0 GiB (off the chart)", "r1: memtotal limit 200.0 GiB (off the chart)",
        "r2: memtotal limit 300.0 GiB (off the chart)"}) {
    EXPECT_EQ(count(r.out, said), 1u) << said << "\n" << r.out;
  }
}

// full.dat as rank `rank` of job `job` (the header's fields that qprof run writes under a launcher).
std::string as_rank(const std::string& path, int rank, const std::string& job) {
  std::ifstream in(plot_data("full.dat"));
  std::string header;
  std::getline(in, header);
  std::ostringstream body;
  body << in.rdbuf();
  std::ofstream(path) << header << " rank=" << rank << " world_size=2 job=" << job << "\n" << body.str();
  return path;
}

// A rank's trace, in panels or overlaid, is named as every job view names it ("rank 0 (fixture)",
// as export and compare do), not by its file; a --label wins, and two alike get their place.
TEST(PlotLegend, RanksAreNamedAsRanks) {
  const std::string dir = test_dir();
  const std::string r0 = as_rank(dir + "/job.fixture.0.dat", 0, "7"), r1 = as_rank(dir + "/job.fixture.1.dat", 1, "7");
  Result r = qprof({"plot", "--facet", "-o", dir + "/f.svg", r0, r1});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string text = svg_text(dir + "/f.svg");
  EXPECT_TRUE(has(text, "rank 0 (fixture) — python3")) << text;
  EXPECT_TRUE(has(text, "rank 1 (fixture) — python3")) << text;
  EXPECT_FALSE(has(text, "job.fixture.0")) << text;

  r = qprof({"plot", "-o", "-", "--size", "120x40", r0, r1});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("rank 1 (fixture)"), std::string::npos) << r.out;

  const std::string other = as_rank(dir + "/other.fixture.0.dat", 0, "8");
  r = qprof({"plot", "--facet", "-o", dir + "/g.svg", r0, other});
  ASSERT_EQ(r.status, 0) << r.err;
  text = svg_text(dir + "/g.svg");
  EXPECT_TRUE(has(text, "rank 0 (fixture) #1")) << "two ranks 0 of two jobs\n" << text;
  EXPECT_TRUE(has(text, "rank 0 (fixture) #2")) << text;

  r = qprof({"plot", "--facet", "-o", dir + "/h.svg", "--label", "first", r0, r1});
  ASSERT_EQ(r.status, 0) << r.err;
  text = svg_text(dir + "/h.svg");
  EXPECT_TRUE(has(text, "first — python3")) << text;
  EXPECT_TRUE(has(text, "rank 1 (fixture) — python3")) << text;
}

}  // namespace
}  // namespace qprof::test
