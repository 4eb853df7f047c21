// SPDX-License-Identifier: Apache-2.0
#include "qprof/plot/reduce.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "qprof/trace/format.hpp"

namespace qprof::plot {
namespace {

const std::string kData = QPROF_TEST_DATA;
constexpr double kMiB = 1024.0 * 1024.0;

TEST(PlotReduce, FullQprofTrace) {
  std::vector<std::string> warnings;
  const TraceData d = *reduce_file(kData + "/plot/full.dat", {}, [&](const std::string& w) { warnings.push_back(w); });
  EXPECT_TRUE(warnings.empty());
  EXPECT_TRUE(d.qprof);
  EXPECT_DOUBLE_EQ(d.t0, 1700000000.0);
  EXPECT_EQ(d.samples, 241u);
  EXPECT_NEAR(d.t_end, 12.0, 1e-3);
  EXPECT_EQ(d.cmdline, "python3 quantize.py --calib-method minmax --model llama-7b");
  // The spike at 6 s is the peak.
  EXPECT_NEAR(d.mem.envelope().max().t, 6.0, 1e-3);
  EXPECT_NEAR(d.mem.envelope().max().v, 5.4 * 1024 * kMiB, kMiB);
  EXPECT_EQ(d.children.size(), 3u);
  EXPECT_FALSE(d.pss.empty());
  EXPECT_FALSE(d.uss.empty());
  EXPECT_FALSE(d.cgroup.empty());
  ASSERT_EQ(d.gpus.size(), 2u);
  EXPECT_EQ(d.gpus[0].info.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(d.gpus[1].info.total, 85899345920u);
  // The sum over devices is taken once per round: 20 + 10 GiB at most.
  EXPECT_DOUBLE_EQ(d.gpu_total.envelope().max().v, 30.0 * 1024 * kMiB);
  EXPECT_FALSE(d.cpu.empty());
  EXPECT_FALSE(d.io_read.empty());
  EXPECT_EQ(d.peaks.at("kernel_process"), 3113851289u);
  EXPECT_EQ(d.peaks.at("cgroup"), 6075029913u);  // the PEAK line wins over the samples
  ASSERT_TRUE(d.exit);
  EXPECT_EQ(d.exit->signal, 9);
  EXPECT_NEAR(d.exit->t, 12.01, 1e-6);

  // Stages from the markers; their markers are edges, the others checkpoints.
  ASSERT_EQ(d.stages.size(), 4u);
  EXPECT_EQ(d.stages[0].name, "Load");
  EXPECT_NEAR(d.stages[0].t_start, 0.1, 1e-6);
  EXPECT_EQ(d.stages[3].name, "Export");
  EXPECT_FALSE(d.stages[3].closed);
  std::vector<std::string> checkpoints;
  for (const PlotMarker& m : d.markers) {
    if (!m.stage_edge) checkpoints.push_back(m.label);
  }
  EXPECT_EQ(checkpoints, (std::vector<std::string>{"checkpoint: batch 100", "saved weights to /tmp/out"}));
}

TEST(PlotReduce, MprofTracesTakeStagesFromFunc) {
  const TraceData func = *reduce_file(kData + "/mprof/func.dat", {});
  EXPECT_FALSE(func.qprof);
  ASSERT_EQ(func.stages.size(), 2u);
  EXPECT_EQ(func.stages[0].name, "__main__.load");
  // The start is the first sample (mprof has no header): FUNC lines before it are relative to it.
  EXPECT_DOUBLE_EQ(func.t0, 1795255548.5936);
  EXPECT_NEAR(func.stages[0].t_start, 1795255548.6497 - 1795255548.5936, 1e-6);
  const TraceData children = *reduce_file(kData + "/mprof/children.dat", {});
  EXPECT_EQ(children.children.size(), 2u);
  ReduceOptions no_children;
  no_children.children = false;
  EXPECT_TRUE(reduce_file(kData + "/mprof/children.dat", no_children)->children.empty());
}

TEST(PlotReduce, WindowKeepsTheNeighboursOutside) {
  std::string text = "QPROF 1 start=100\n";
  for (int i = 0; i <= 100; ++i) {
    char line[64];
    std::snprintf(line, sizeof line, "MEM %d.0 %.4f\n", i, 100.0 + i * 0.1);
    text += line;
  }
  ReduceOptions o;
  o.from = 2.0;
  o.to = 5.0;
  const TraceData d = *reduce_text(text, "w.dat", o);
  EXPECT_EQ(d.samples, 101u);  // every line counted
  const auto pts = d.mem.points();
  ASSERT_FALSE(pts.empty());
  EXPECT_NEAR(pts.front().t, 1.9, 1e-6);                // the last one before
  EXPECT_NEAR(pts.back().t, 5.1, 1e-6);                 // the first one after
  EXPECT_NEAR(d.mem.envelope().max().v, 50 * kMiB, 1);  // the peak within the window
  EXPECT_EQ(d.mem.envelope().count(), 31u);
}

TEST(PlotReduce, AGivenOriginPutsALaterTraceWhereItRan) {
  // A job's rank that started 5 s after the earliest: on the job's axis it begins at 5 s, with
  // its markers and its end where they happened; on its own axis at 0.
  const std::string text =
      "QPROF 1 start=105\nMEM 10.0 105.0000\nMARK 106.0 Load Start\nMEM 20.0 106.0000\nMEM 5.0 107.0000\n";
  ReduceOptions job;
  job.t0 = 100.0;
  const TraceData shifted = *reduce_text(text, "rank1.dat", job);
  const TraceData own = *reduce_text(text, "rank1.dat", {});
  ASSERT_FALSE(shifted.mem.points().empty());
  EXPECT_NEAR(shifted.mem.points().front().t, 5.0, 1e-6);
  EXPECT_NEAR(own.mem.points().front().t, 0.0, 1e-6);
  ASSERT_EQ(shifted.markers.size(), 1u);
  EXPECT_NEAR(shifted.markers.front().t, 6.0, 1e-6);
  EXPECT_NEAR(shifted.t_end, 7.0, 1e-6);
  EXPECT_NEAR(own.t_end, 2.0, 1e-6);
}

// The unreclaimable series of a run in a cgroup: anon + shmem (shared memory is charged as page
// cache, yet only swap could free it); a line of an older qprof, without shmem, gives anon.
TEST(PlotReduce, TheCgroupsUnreclaimableSeriesHoldsItsSharedMemory) {
  const std::string text =
      "QPROF 1 start=100\nMEM 30.0 100.0\nCGROUP 100.0 115343360 116391936 4194304 110100480 104857600\n"
      "MEM 30.0 100.5\nCGROUP 100.5 115343360 116391936 6291456 110100480\n";
  const TraceData d = *reduce_text(text, "shm.dat", {});
  const Series* u = metric_series_of(d, "unreclaimable");
  ASSERT_NE(u, nullptr);
  ASSERT_FALSE(u->points().empty());
  EXPECT_DOUBLE_EQ(u->envelope().max().v, 104 * kMiB);
  EXPECT_DOUBLE_EQ(u->points().back().v, 6 * kMiB);
}

// A process named at its join, before its exec, is named again once it exec'd: the later PROC
// line holds in the legend.
TEST(PlotReduce, ALaterNameOfTheSameProcessHolds) {
  const std::string text =
      "QPROF 1 start=100 root_pid=10\nMEM 30.0 100.0\nPROC 11 sh\nCHLD 11 20.0 100.0\n"
      "MEM 40.0 100.5\nPROC 11 python3\nCHLD 11 30.0 100.5\n";
  const TraceData d = *reduce_text(text, "exec.dat", {});
  const auto child = std::find_if(d.children.begin(), d.children.end(), [](const ChildData& c) { return c.pid == 11; });
  ASSERT_NE(child, d.children.end());
  EXPECT_EQ(child->name, "python3");
}

TEST(PlotReduce, ErrorsCarryFileAndLine) {
  const Result<TraceData> malformed = reduce_file(kData + "/plot/malformed.dat", {});
  ASSERT_FALSE(malformed) << "no error";
  EXPECT_NE(malformed.failure().message.find("malformed.dat:5: "), std::string::npos) << malformed.failure().message;
  const Result<TraceData> empty = reduce_file(kData + "/plot/empty.dat", {});
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.failure().message, kData + "/plot/empty.dat: no memory samples (MEM lines): the trace is empty");
  std::vector<std::string> warnings;
  const TraceData t =
      *reduce_file(kData + "/plot/truncated.dat", {}, [&](const std::string& w) { warnings.push_back(w); });
  EXPECT_EQ(t.samples, 20u);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("truncated.dat:23: incomplete trace: "), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("its last line (23) is cut"), std::string::npos) << warnings[0];
}

// plot says what every reader says of a file cut short or of runs appended, in the same words,
// the file's name made terminal-safe: the run appended after an empty first command is found.
TEST(PlotReduce, ReadingNoticesAreEveryReadersOwn) {
  std::vector<std::string> warnings;
  const std::string name = "odd\x1b[2Jname.dat";
  const Result<TraceData> d = reduce_text("CMDLINE \nMEM 1.0 1700000000.0\nCMDLINE b\nMEM 2.0 1700000001.0\nMEM 3",
                                          name, {}, [&](const std::string& w) { warnings.push_back(w); });
  ASSERT_TRUE(d);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[0].rfind("odd\\x1b[2Jname.dat:5: incomplete trace: its last line (5) is cut", 0), 0u)
      << warnings[0];
  EXPECT_EQ(warnings[1].rfind("odd\\x1b[2Jname.dat:3: a second run starts here", 0), 0u) << warnings[1];
  for (const std::string& w : warnings) EXPECT_EQ(w.find('\x1b'), std::string::npos) << w;
}

// A million samples with one spike: the envelope must keep it, in little memory.
TEST(PlotReduce, MillionSamplesKeepTheSpike) {
  std::string text = "QPROF 1 start=1000\n";
  text.reserve(40u * 1'000'000u);
  std::mt19937 rng(3);
  const int spike = 612'345;
  for (int i = 0; i < 1'000'000; ++i) {
    const double mib = i == spike ? 9000.0 : 100.0 + (rng() % 1000) / 10.0;
    char line[64];
    std::snprintf(line, sizeof line, "MEM %.6f %.4f\n", mib, 1000.0 + i * 0.001);
    text += line;
  }
  ReduceOptions o;
  o.columns = 1000;
  const TraceData d = *reduce_text(text, "million.dat", o);
  const auto pts = d.mem.points();
  EXPECT_LE(pts.size(), 8000u);
  const auto top = std::max_element(pts.begin(), pts.end(), [](const Point& a, const Point& b) { return a.v < b.v; });
  EXPECT_DOUBLE_EQ(top->v, trace::from_mib(9000.0));
  EXPECT_NEAR(top->t, spike * 0.001, 1e-6);
}

// Past kMaxSeriesPerKind processes, the ones with the highest peaks keep a series each and the
// rest are one envelope: memory bounded by the chart, not by the number of processes.
TEST(PlotReduce, ManyProcessesKeepTheHighestAndSummariseTheRest) {
  std::string text = "QPROF 1 start=100 root_pid=1\nMEM 1.0 100.0\n";
  const int n = 1000;
  char line[96];
  for (int i = 0; i < n; ++i) {  // process i peaks at i MiB: the last 64 are the highest
    std::snprintf(line, sizeof line, "CHLD %d %d.0 %.4f\n", 1000 + i, i, 100.0 + i * 0.001);
    text += line;
  }
  // Ten GPU devices and directories past the bound too: counted, never a series each.
  for (int i = 0; i < static_cast<int>(kMaxSeriesPerKind) + 10; ++i) {
    std::snprintf(line, sizeof line, "GPU 100.5 %d 1048576 2097152\nDIR 100.5 %d 1 2 3\n", i, i);
    text += line;
  }
  text += "MEM 1.0 102.0\n";
  const TraceData d = *reduce_text(text, "many.dat", {});
  ASSERT_TRUE(d.root_line) << "the root's own RSS comes first, beside the processes";
  ASSERT_EQ(d.children.size(), kMaxSeriesPerKind + 1);
  EXPECT_EQ(d.other_children_count, n - kMaxSeriesPerKind);
  for (std::size_t k = 1; k < d.children.size(); ++k) {
    EXPECT_GE(d.children[k].pid, 1000 + n - static_cast<int>(kMaxSeriesPerKind)) << d.children[k].pid;
  }
  EXPECT_NEAR(d.other_children.envelope().max().v, (n - kMaxSeriesPerKind - 1) * kMiB, kMiB / 100);
  EXPECT_EQ(d.gpus.size(), kMaxSeriesPerKind);
  EXPECT_EQ(d.gpus_left_out, 10u);
  EXPECT_NEAR(d.gpu_total.envelope().max().v, (kMaxSeriesPerKind + 10) * kMiB, 1.0) << "every device in the total";
  EXPECT_EQ(d.dirs.size(), kMaxSeriesPerKind);
  EXPECT_EQ(d.dirs_left_out, 10u);
}

}  // namespace
}  // namespace qprof::plot
