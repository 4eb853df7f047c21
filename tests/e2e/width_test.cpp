// SPDX-License-Identifier: Apache-2.0
// Every line qprof prints fits 80 columns where its output is not a terminal (a pipe, a log, a
// CI page): help, report, compare, fit, the text chart, run's summary and warnings, sweep, list,
// and the messages of every command (wrapped, their words all there).
#include <gtest/gtest.h>

#include <filesystem>
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

// run's summary and what it says after the command (a budget's verdict, the stage table), -v's
// whole block too: wrapped lines, every word kept.
TEST(Width, RunsSummaryAndWarningsFit80Columns) {
  const std::string dir = fresh_dir("width_run");
  for (const bool verbose : {false, true}) {
    std::vector<std::string> args{"run", "--max-peak", "1M", "-o", dir + "/run.dat", "--", workload("stage_spike"),
                                  "20",  "50",         "20", "50"};
    if (verbose) args.insert(args.begin() + 1, "-v");
    const Result r = qprof(args);
    EXPECT_EQ(r.status, 3) << "over the budget\n" << r.err;
    expect_fits(verbose ? "run -v" : "run", r.err);
    EXPECT_NE(joined(r.err).find("memory budget exceeded:"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("qprof:   trace"), std::string::npos) << "the summary\n" << r.err;
  }
}

// A usage error of a hundred and more columns wraps under itself; the words are all there.
TEST(Width, LongErrorsWrapAndKeepTheirWords) {
  const Result r = qprof({"plot", "--window", "3,1", data_file("plot/full.dat")});
  EXPECT_EQ(r.status, 2) << r.err;
  expect_fits("plot --window 3,1", r.err);
  EXPECT_NE(r.err.find('\n'), r.err.size() - 1) << "more than one line: " << r.err;
  EXPECT_NE(joined(r.err).find("--window 3,1: expected T0,T1 from the start (T0 < T1; either may be left out)"),
            std::string::npos)
      << r.err;
  // One that the option parser refuses: wrapped too, with where to look.
  const Result parser = qprof({"run", "-i", "abc", "--", "true"});
  EXPECT_EQ(parser.status, 2) << parser.err;
  expect_fits("run -i abc", parser.err);
  EXPECT_NE(parser.err.find("\nRun 'qprof run --help' for the options.\n"), std::string::npos) << parser.err;
}

// sweep's tables leave out what the traces' names need room for, and say so; list leaves out
// START where the default names (which hold it) and the command need the room.
TEST(Width, SweepAndListFit80Columns) {
  const std::string dir = fresh_dir("width_sweep");
  const Result sweep =
      qprof({"sweep", "-d", dir, "-p", "n=1,2", "--", workload("stage_spike"), "{n}", "50", "{n}", "50"});
  ASSERT_EQ(sweep.status, 0) << sweep.err;
  expect_fits("sweep", sweep.out);
  expect_fits("sweep's stderr", sweep.err);
  EXPECT_NE(sweep.out.find(dir + "/n=1.dat"), std::string::npos) << "the trace's name whole\n" << sweep.out;
  EXPECT_NE(joined(sweep.out).find("left out to fit 80 columns: repeat"), std::string::npos) << sweep.out;

  const std::string traces = fresh_dir("width_list");
  for (const char* name : {"qprof_20260101120000.000_4242.dat", "qprof_20260101120100.000_4243.dat"}) {
    std::filesystem::copy_file(dir + "/n=1.dat", traces + "/" + name);
  }
  // An mprof trace: its PEAK is Σ RSS, marked, and the note under the table wraps.
  std::filesystem::copy_file(data_file("mprof/func.dat"), traces + "/mprofile_20250101120000.dat");
  const Result list = qprof({"list", "--dir", traces});
  ASSERT_EQ(list.status, 0) << list.err;
  expect_fits("list", list.out);
  EXPECT_NE(list.out.find("START left out to fit 80 columns"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("qprof_20260101120100.000_4243.dat"), std::string::npos) << "names whole\n" << list.out;
  EXPECT_NE(joined(list.out).find("*: no footprint in this trace"), std::string::npos) << list.out;
  // Names that are not default ones hold no time: START stays, the command gives way (a name
  // stays whole, here a long temporary path: the one thing that may pass 80 columns).
  const std::string other = fresh_dir("width_list_named");
  for (const char* name : {"calibration-minmax-llama-7b-run-a.dat", "calibration-minmax-llama-7b-run-b.dat"})
    std::filesystem::copy_file(dir + "/n=1.dat", other + "/" + name);
  const Result long_names = qprof(
      {"list", other + "/calibration-minmax-llama-7b-run-a.dat", other + "/calibration-minmax-llama-7b-run-b.dat"});
  EXPECT_NE(long_names.out.find("START"), std::string::npos) << long_names.out;
  EXPECT_EQ(long_names.out.find("left out"), std::string::npos) << long_names.out;
}

}  // namespace
}  // namespace qprof::test
