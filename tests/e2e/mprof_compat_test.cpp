// SPDX-License-Identifier: Apache-2.0
// The original mprof reads qprof's traces; qprof reads mprof's.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using trace::Stage;
using trace::Trace;

namespace {

std::string record_with_markers() {
  const std::string out = temp_dir() + "/for_mprof.dat";
  const Result r = qprof({"run", "-q", "-M", "-o", out, "--", workload("markers")});
  EXPECT_EQ(r.status, 0) << r.err;
  return out;
}

TEST(MprofCompat, MprofPeakReadsQprofsTrace) {
  const std::string out = record_with_markers();
  const Result r = run({mprof_bin(), "peak", out});
  ASSERT_EQ(r.status, 0) << r.err;
  // "FILE\t<peak> MiB"
  const std::size_t tab = r.out.find('\t');
  ASSERT_NE(tab, std::string::npos) << r.out;
  const double mprof_peak = std::strtod(r.out.c_str() + tab + 1, nullptr);
  EXPECT_NEAR(mprof_peak, mib(max_mem(trace::read_trace(out))), 0.001);
}

TEST(MprofCompat, MprofPlotDrawsQprofsTraceWithItsStageBrackets) {
  const std::string out = record_with_markers();
  const std::string png = temp_dir() + "/mprof_plot.png";
  const Result r = run({mprof_bin(), "plot", "-o", png, out}, "", 120);
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string image = read_file(png);
  ASSERT_GT(image.size(), 1000u);
  EXPECT_EQ(image.substr(1, 3), "PNG");
}

TEST(MprofCompat, MprofsOwnReaderSeesTheSamplesStagesAndChildren) {
  const std::string out = record_with_markers();
  const Trace t = trace::read_trace(out);
  const std::string script =
      "import sys, mprof\n"
      "d = mprof.read_mprofile_file(sys.argv[1])\n"
      "print(len(d['mem_usage']), sorted(d['func_timestamp']), len(d['children']))\n";
  const Result r = run({debian_python(), "-c", script, out});
  ASSERT_EQ(r.status, 0) << r.err;
  std::ostringstream expected;
  expected << t.mem.size() << " ['Calibration', 'Load'] " << t.children.size() << "\n";
  EXPECT_EQ(r.out, expected.str());
}

// mprof writes its profiled functions' FUNC lines first (the child's, at its exit), before the
// samples that give the start: the Perfetto export put every one at 0. Recorded by the real mprof,
// each is where `report` says it starts.
TEST(MprofCompat, ExportPutsProfiledFunctionsAtTheirTimes) {
  const std::string dir = fresh_dir("mprof_func");
  const std::string script = dir + "/job.py", out = dir + "/func.dat";
  write_file(script,
             "import time\n"
             "@profile\n"
             "def load():\n"
             "    b = bytearray(20 << 20)\n"
             "    time.sleep(0.2)\n"
             "    return b\n"
             "@profile\n"
             "def train(x):\n"
             "    time.sleep(0.2)\n"
             "time.sleep(0.2)\n"
             "x = load()\n"
             "train(x)\n"
             "train(x)\n");
  const Result rec = run({mprof_bin(), "run", "-o", out, script}, "", 120);  // as a Python program: @profile
  ASSERT_EQ(rec.status, 0) << rec.err;
  ASSERT_EQ(read_file(out).rfind("FUNC", 0), 0u) << "mprof writes its FUNC lines first";
  const auto report = nlohmann::json::parse(qprof({"report", "--format", "json", out}).out);
  const auto exported = nlohmann::json::parse(qprof({"export", out}).out);
  std::vector<std::pair<std::string, double>> stages, slices;
  for (const auto& s : report["stages"]) stages.emplace_back(s["stage"], s["start_s"].get<double>() * 1e6);
  for (const auto& e : exported["traceEvents"]) {
    if (e["ph"] == "X") slices.emplace_back(e["name"], e["ts"].get<double>());
  }
  ASSERT_EQ(slices.size(), 3u) << exported.dump();
  ASSERT_EQ(stages.size(), slices.size());
  for (std::size_t i = 0; i < slices.size(); ++i) {
    EXPECT_EQ(slices[i].first, stages[i].first);
    EXPECT_NEAR(slices[i].second, stages[i].second, 100) << slices[i].first << " (µs; report's to 0.1 ms)";
    EXPECT_GT(slices[i].second, 150000) << "after the first 0.2 s";
  }
}

TEST(MprofCompat, QprofReadsMprofsTraces) {
  const Trace children = trace::read_trace(data_file("mprof/children.dat"));
  EXPECT_FALSE(children.is_qprof());
  EXPECT_EQ(children.cmdline, "/usr/bin/python3 /tmp/mp_children.py");
  EXPECT_EQ(children.mem.size(), 11u);
  EXPECT_EQ(children.children.size(), 2u);
  const Trace func = trace::read_trace(data_file("mprof/func.dat"));
  ASSERT_EQ(func.stages.size(), 2u);
  EXPECT_EQ(func.stages[0].name, "__main__.load");
  EXPECT_EQ(func.stages[0].source, Stage::Source::func);
  EXPECT_NEAR(mib(func.stages[0].mem_end), 61.7930, 1e-4);
}

// `mprof run -o FILE` appends: two runs in one file, each under its own CMDLINE. Every command
// that reads it says where the second run starts and reads it under the last command, as mprof's
// own reader does (plot took the first, report the last).
TEST(MprofCompat, RunsAppendedToOneFileAreSaidByEveryReader) {
  const std::string out = temp_dir() + "/appended.dat";
  std::filesystem::remove(out);
  for (const char* mib : {"80", "40"}) {
    const Result r = run({mprof_bin(), "run", "-o", out, debian_python(), "-c",
                          std::string("a = bytearray(") + mib + " << 20); import time; time.sleep(0.3)"},
                         "", 120);
    ASSERT_EQ(r.status, 0) << r.err;
  }
  const std::string text = read_file(out);
  const std::size_t second = text.find("CMDLINE", 1);
  ASSERT_NE(second, std::string::npos) << "mprof no longer appends: " << text.substr(0, 200);
  const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(second), '\n');
  const std::string where = out + ":" + std::to_string(line) + ": a second run starts here";
  const std::string script = temp_dir() + "/appended.gp";
  const std::vector<std::vector<std::string>> commands = {
      {"report", out}, {"export", out}, {"compare", out},
      {"peak", out},   {"list", out},   {"plot", out, "-o", temp_dir() + "/appended.svg", "--script", script}};
  for (const auto& c : commands) {
    const Result r = qprof(c);
    EXPECT_EQ(r.status, 0) << c[0] << ": " << r.err;
    EXPECT_NE(joined(r.err).find(where), std::string::npos) << c[0] << ": " << r.err;
  }
  EXPECT_NE(read_file(script).find("bytearray(40"), std::string::npos) << "the chart is titled by the last command";
  EXPECT_NE(qprof({"report", out}).out.find("bytearray(40"), std::string::npos);
  // One run: not a word.
  const std::string one = temp_dir() + "/one_run.dat";
  write_file(one, text.substr(0, second));
  EXPECT_EQ(joined(qprof({"report", one}).err).find("second run"), std::string::npos);
}

// Every command that reads a trace reads `dat` (exit 0) and says `where` on stderr, once.
void expect_every_reader_says_once(const std::string& dat, const std::string& where) {
  const std::vector<std::vector<std::string>> commands = {{"report", dat}, {"export", dat}, {"compare", dat},
                                                          {"peak", dat},   {"list", dat},   {"plot", dat}};
  for (const auto& c : commands) {
    const Result r = qprof(c);
    EXPECT_EQ(r.status, 0) << c[0] << ": " << r.err;
    EXPECT_NE(joined(r.err).find(where), std::string::npos) << c[0] << ": " << r.err;
    EXPECT_EQ(joined(r.err).find(where, joined(r.err).find(where) + 1), std::string::npos) << c[0] << ": said once";
  }
}

// mprof stamps its samples with the wall clock, which a clock step sets back: a sample earlier
// than one before it. Every reader reads the samples as written and says where the clock went
// back; the chart reaches back to the earliest sample, so that the peak it names is drawn.
TEST(MprofCompat, AClockThatWentBackIsSaidByEveryReader) {
  const std::string dat = temp_dir() + "/clock_back.dat";
  write_file(dat,
             "CMDLINE ./job\nMEM 10 1700000000.1\nMEM 50 1700000000.0\nMEM 30 1700000000.2\nMEM 10 1700000000.3\n");
  const std::string where = dat + ":3: the clock went back 100 ms here";
  expect_every_reader_says_once(dat, where);
  const Result chart = qprof({"plot", dat, "--size", "80x24"});
  EXPECT_NE(chart.out.find("peak 50.0 MiB at -100 ms"), std::string::npos) << chart.out;
  EXPECT_NE(chart.out.find(" 50 +"), std::string::npos) << "the axis reaches the peak it names\n" << chart.out;
  // A clock that only goes forward: not a word.
  const std::string forward = temp_dir() + "/clock_forward.dat";
  write_file(forward, "CMDLINE ./job\nMEM 10 1700000000.0\nMEM 50 1700000000.1\nMEM 50 1700000000.1\n");
  EXPECT_EQ(qprof({"report", forward}).err.find("clock"), std::string::npos);
}

// A qprof trace whose header's start is far before its first sample (an edited or joined file):
// every reader says so once, with the gap, and still reads it; a run's own trace says nothing.
TEST(MprofCompat, AFirstSampleFarAfterTheHeadersStartIsSaidByEveryReader) {
  const std::string dat = temp_dir() + "/late_start.dat";
  write_file(dat,
             "QPROF 1 version=0.1.0 interval=0.100000 host=h root_pid=1 start=1699999000.000000 metric=rss\n"
             "CMDLINE ./job\nMEM 10 1700000000.0\nMEM 50 1700000000.1\n"
             "EXIT 1700000000.2 status=0 signal=0 timed_out=0\n");
  const std::string where = dat + ":3: the first sample comes 16 min 40 s after the header's start";
  expect_every_reader_says_once(dat, where);
  const std::string own = temp_dir() + "/late_start_own.dat";
  const Result rec = qprof({"run", "-q", "-o", own, "--", "true"});
  ASSERT_EQ(rec.status, 0) << rec.err;
  EXPECT_EQ(joined(qprof({"report", own}).err).find("first sample"), std::string::npos);
}

}  // namespace
}  // namespace qprof::test
