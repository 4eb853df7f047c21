// SPDX-License-Identifier: Apache-2.0
// Every line qprof prints fits 80 columns where its output is not a terminal (a pipe, a log, a
// CI page): help, report, compare, fit and the text chart.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "e2e_util.hpp"

namespace qprof::test {
namespace {

constexpr std::size_t kColumns = 80;

const std::vector<std::string> kSubcommands = {
#define QPROF_SUBCOMMAND(name) #name,
#include QPROF_TEST_SUBCOMMANDS_DEF
#undef QPROF_SUBCOMMAND
};

// Columns of a line: one per UTF-8 character.
std::size_t columns(const std::string& line) {
  std::size_t n = 0;
  for (unsigned char c : line) n += (c & 0xC0) != 0x80;
  return n;
}

void expect_fits(const std::string& what, const std::string& text) {
  std::istringstream in(text);
  std::size_t n = 0;
  for (std::string line; std::getline(in, line);) {
    ++n;
    EXPECT_LE(columns(line), kColumns) << what << ", line " << n << ": " << line;
  }
  EXPECT_GT(n, 0u) << what << " printed nothing";
}

TEST(Width, EveryHelpFits80Columns) {
  const Result top = qprof({"--help"});
  EXPECT_EQ(top.status, 0);
  expect_fits("qprof --help", top.out);
  for (const std::string& sub : kSubcommands) {
    const Result r = qprof({sub, "--help"});
    EXPECT_EQ(r.status, 0) << sub;
    expect_fits("qprof " + sub + " --help", r.out);
  }
}

TEST(Width, ReportCompareAndTheTextChartFit80Columns) {
  const std::string full = data_file("plot/full.dat");
  const Result report = qprof({"report", full});
  EXPECT_EQ(report.status, 0) << report.err;
  expect_fits("report", report.out);
  const Result compare = qprof({"compare", "--stages", full, full});
  EXPECT_EQ(compare.status, 0) << compare.err;
  expect_fits("compare", compare.out);
  const Result chart = qprof({"plot", full});
  EXPECT_EQ(chart.status, 0) << chart.err;
  expect_fits("plot's text chart", chart.out);
}

TEST(Width, FitFits80Columns) {
  const std::string data = temp_dir() + "/data.bin";
  std::ofstream(data) << std::string(1 << 20, 'x');
  const Result r = qprof({"fit", "--runs-max", "3", "--", workload("anon_and_mmap"), "20", data, "1"});
  if (r.status == 2 && r.err.find("cgroup") != std::string::npos) GTEST_SKIP() << "no memory cgroup here: " << r.err;
  expect_fits("fit", r.err);
}

}  // namespace
}  // namespace qprof::test
