// SPDX-License-Identifier: Apache-2.0
// What users of mprof, git and /usr/bin/time type out of habit: accepted, or refused with the
// one-line fix (issue: "the first ten minutes").
#include <gtest/gtest.h>

#include <filesystem>

#include "e2e_util.hpp"

namespace qprof::test {
namespace {

namespace fs = std::filesystem;

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

std::string plot_data(const std::string& name) { return data_file("plot/" + name); }

TEST(Habits, HelpSubcommandAndVersionWordAsGitHasThem) {
  const Result help = qprof({"help", "run"});
  EXPECT_EQ(help.status, 0) << help.err;
  EXPECT_EQ(help.out, qprof({"run", "--help"}).out);
  EXPECT_TRUE(has(help.out, "Usage: qprof run")) << help.out;
  EXPECT_EQ(qprof({"help"}).out, qprof({"--help"}).out);
  const Result version = qprof({"version"});
  EXPECT_EQ(version.status, 0) << version.err;
  EXPECT_TRUE(version.out.starts_with("qprof ")) << version.out;
  EXPECT_EQ(version.out, qprof({"--version"}).out);
}

TEST(Habits, PlotTakesMprofsDashSAndTheNewestTrace) {
  const std::string dir = temp_dir();
  fs::copy_file(plot_data("full.dat"), dir + "/qprof_20260101000000.000_1.dat");
  // No file: the newest trace here, as mprof plot and qprof peak take it; stdout a pipe: a text
  // chart there, no refusal.
  const Result newest = run({"sh", "-c", "cd '" + dir + "' && exec '" + qprof_bin() + "' plot -s"});
  EXPECT_EQ(newest.status, 0) << newest.err;
  EXPECT_TRUE(has(newest.out, "time from start (s)")) << newest.out;
  EXPECT_TRUE(has(joined(newest.err), "drawing the newest trace here, qprof_20260101000000.000_1.dat"))
      << "a chart says which trace it drew\n"
      << newest.err;
  // report takes it as well, its path the first fact.
  const Result report = run({"sh", "-c", "cd '" + dir + "' && exec '" + qprof_bin() + "' report"});
  EXPECT_EQ(report.status, 0) << report.err;
  EXPECT_TRUE(report.out.starts_with("trace            qprof_20260101000000.000_1.dat\n")) << report.out;
  // -s is --trend.
  const Result trend = qprof({"plot", plot_data("full.dat"), "--trend"});
  EXPECT_EQ(trend.status, 0) << trend.err;
  EXPECT_EQ(qprof({"plot", plot_data("full.dat"), "-s"}).out, trend.out);
  // An empty directory: the fix in one line.
  const std::string empty = temp_dir() + "/empty";
  fs::create_directory(empty);
  const Result none = run({"sh", "-c", "cd '" + empty + "' && exec '" + qprof_bin() + "' plot"});
  EXPECT_EQ(none.status, 2);
  EXPECT_TRUE(has(joined(none.err), "no trace given, and no qprof_*.dat or mprofile_*.dat here")) << none.err;
  const Result no_report = run({"sh", "-c", "cd '" + empty + "' && exec '" + qprof_bin() + "' report"});
  EXPECT_EQ(no_report.status, 2);
  EXPECT_TRUE(has(joined(no_report.err), "no trace given, and no qprof_*.dat or mprofile_*.dat here")) << no_report.err;
}

TEST(Habits, UnitsAndFactorsAsUsersWriteThem) {
  const std::string dir = temp_dir();
  // 100us is what 0.1ms is.
  Result r = qprof({"run", "-q", "-i", "100us", "-o", dir + "/i.dat", "--", "true"});
  EXPECT_EQ(r.status, 0) << r.err;
  // A duration out of range is said so, not "not a duration".
  r = qprof({"run", "-q", "-i", "1e-9", "--", "true"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(joined(r.err), "'1e-9' is out of range: at least 0.0001s and at most 3600s")) << r.err;
  // More labels than traces: a comma split one.
  r = qprof({"export", "--label", "x,y", plot_data("full.dat")});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(joined(r.err), "2 labels (--label) for 1 trace (a comma splits a --label into two")) << r.err;
  // peak --unit G, as --max-peak 0.05G is read.
  r = qprof({"peak", plot_data("full.dat"), "--unit", "G"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(r.out, "GiB")) << r.out;
  // A slowdown as it is said: 4x.
  r = qprof({"fit", "--max-slowdown", "4x"});
  EXPECT_FALSE(has(joined(r.err), "4x")) << r.err;
  EXPECT_TRUE(has(joined(r.err), "no command given")) << r.err;
  r = qprof({"fit", "--max-slowdown", "4y", "--", "true"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(joined(r.err), "'4y' is not a factor between 1 and 1e+06 (4 or 4x)")) << r.err;
}

// mprof's unit: a bare number is MiB, and the budget line says so in its unit; never bytes.
TEST(Habits, ABareSizeIsMiB) {
  const std::string dir = temp_dir();
  const Result r = qprof({"run", "--max-peak", "50", "-o", dir + "/b.dat", "--", "true"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(has(joined(r.err), "is within the budget of 50.0 MiB")) << r.err;
  const Result peak = qprof({"peak", plot_data("full.dat"), "--max-peak", "1"});
  EXPECT_EQ(peak.status, 3) << peak.err;
  EXPECT_TRUE(has(joined(peak.err), "1.00 MiB")) << peak.err;
  EXPECT_TRUE(has(unwrapped(qprof({"run", "--help"}).out), "a bare number is MiB")) << "--help says so";
}

// "--max-peak 4 GB": the shell's two words. Else GB would run as the command (exit 127).
TEST(Habits, ASizeSplitBySpaceIsAUsageErrorThatNamesIt) {
  const std::string dir = temp_dir();
  Result r = qprof({"run", "--max-peak", "4", "GB", "-o", dir + "/s.dat", "true"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(joined(r.err), "qprof run: --max-peak 4 GB: a size is one word: --max-peak 4GB")) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/s.dat"));
  r = qprof({"peak", "--max-peak=1.5", "GiB", plot_data("full.dat")});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(joined(r.err), "--max-peak 1.5GiB")) << r.err;
  r = qprof({"compare", "--max-growth", "10", "%", plot_data("full.dat"), plot_data("full.dat")});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(joined(r.err), "--max-growth 10%")) << r.err;
  // A number and then a command is no split size.
  r = qprof({"run", "-q", "--max-peak", "4", "-o", dir + "/c.dat", "true"});
  EXPECT_EQ(r.status, 0) << r.err;
}

// mprof prints 2 lines, time -v 23: the default summary of a one-process job is short, in plain
// words, and -v gives every figure.
TEST(Habits, TheDefaultSummaryIsShortAndVerboseIsWhole) {
  const std::string dir = temp_dir();
  const Result r = qprof({"run", "-o", dir + "/short.dat", "--", "true"});
  EXPECT_EQ(r.status, 0) << r.err;
  std::size_t lines = 0;
  for (char c : r.err) lines += c == '\n';
  EXPECT_LE(lines, 12u) << r.err;
  for (const char* kept : {"qprof:   footprint", "qprof:   duration", "exit status 0", "qprof:   \u03a3 RSS",
                           "as mprof counts it", "qprof:   trace"}) {
    EXPECT_TRUE(has(joined(r.err), kept)) << kept << ": " << r.err;
  }
  EXPECT_FALSE(has(joined(r.err), "overhead")) << r.err;
  const Result v = qprof({"run", "-v", "-o", dir + "/whole.dat", "--", "true"});
  EXPECT_TRUE(has(joined(v.err), "qprof:   overhead")) << v.err;
  EXPECT_FALSE(has(joined(v.err), "% of one core)")) << "a run of milliseconds has no meaningful share: " << v.err;
}

TEST(Habits, MprofsBackendIsRefusedWithWhereTheFootprintIs) {
  const Result r = qprof({"run", "--backend", "psutil_pss", "true"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(has(joined(r.err), "--backend: qprof has none to choose")) << r.err;
  EXPECT_TRUE(has(joined(r.err), "footprint")) << r.err;
  EXPECT_EQ(joined(r.err).find('\n'), joined(r.err).size() - 1) << "one message: " << r.err;
}

}  // namespace
}  // namespace qprof::test
