// SPDX-License-Identifier: Apache-2.0
// Memory by kind, tasks and GPU busy time: /proc/PID/status parsing, the trace lines, and the
// per-stage bottleneck figures.
#include <limits>

#include <gtest/gtest.h>

#include "qprof/analysis/bottleneck.hpp"
#include "qprof/common/proc_status.hpp"
#include "qprof/trace/format.hpp"
#include "temp_files.hpp"

namespace qprof {
using analysis::kGpuIdleBelowPercent;
using analysis::kGpuUsedPercent;
using analysis::stage_bottlenecks;
using trace::GpuUtilSample;
using trace::MemKindsSample;
using trace::Stage;
using trace::TasksSample;
using trace::Trace;
using trace::TraceMeta;

namespace {

// Recorded from a 6.1 kernel (trimmed after SigQ).
constexpr const char* kStatus =
    "Name:\tpython3\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\nPid:\t4242\nPPid:\t1\n"
    "VmPeak:\t  912344 kB\nVmSize:\t  912340 kB\nVmLck:\t       0 kB\nVmPin:\t       0 kB\n"
    "VmHWM:\t  310000 kB\nVmRSS:\t  307200 kB\nRssAnon:\t  102400 kB\nRssFile:\t  204000 kB\n"
    "RssShmem:\t     800 kB\nVmData:\t  200000 kB\nVmStk:\t     132 kB\nVmSwap:\t    2048 kB\n"
    "HugetlbPages:\t       0 kB\nCoreDumping:\t0\nTHP_enabled:\t1\nThreads:\t17\nSigQ:\t0/63372\n";

TEST(ProcStatus, ReadsKindsSwapSizeAndThreads) {
  const proc::StatusUsage u = proc::parse_status_usage(kStatus);
  EXPECT_TRUE(u.valid);
  EXPECT_EQ(u.anon, 102400u * 1024);
  EXPECT_EQ(u.file, 204000u * 1024);
  EXPECT_EQ(u.shmem, 800u * 1024);
  EXPECT_EQ(u.swap, 2048u * 1024);
  EXPECT_EQ(u.vsz, 912340u * 1024);
  EXPECT_EQ(u.threads, 17u);
}

TEST(ProcStatus, ZombieHasNoMemoryButIsValid) {
  const proc::StatusUsage u = proc::parse_status_usage("Name:\tsh\nState:\tZ (zombie)\nThreads:\t1\nSigQ:\t0/1\n");
  EXPECT_TRUE(u.valid);
  EXPECT_EQ(u.anon + u.file + u.shmem + u.swap + u.vsz, 0u);
  EXPECT_EQ(u.threads, 1u);
  EXPECT_FALSE(proc::parse_status_usage("").valid);
  EXPECT_FALSE(proc::parse_status_usage("VmSize:\t12 kB\n").valid) << "cut short before Threads";
}

TEST(UsageLines, RoundTripThroughWriterAndReader) {
  const test::RemovedTempFile file("usage_lines.dat");
  const std::string& path = file.path();
  {
    trace::Writer w(path);
    TraceMeta meta;
    meta.qprof_version = "test";
    meta.start = 100;
    w.header(meta);
    w.mem(100, 1 << 20);
    w.kinds(MemKindsSample{100.5, 1, 2, 3, 4});
    w.tasks(TasksSample{100.5, 3, 12, Bytes{5} << 30});
    w.gpu_util(GpuUtilSample{100.5, 0, 12.5, 3.0, std::nullopt, std::nullopt, std::nullopt});
    w.gpu_util(GpuUtilSample{100.6, 1, 99.0, 40.0, 33.3, 1.5e9, 2e6});
  }
  const Trace t = trace::read_trace(path);
  ASSERT_EQ(t.kinds.size(), 1u);
  EXPECT_EQ(t.kinds[0].anon, 1u);
  EXPECT_EQ(t.kinds[0].file, 2u);
  EXPECT_EQ(t.kinds[0].shmem, 3u);
  EXPECT_EQ(t.kinds[0].swap, 4u);
  ASSERT_EQ(t.tasks.size(), 1u);
  EXPECT_EQ(t.tasks[0].processes, 3u);
  EXPECT_EQ(t.tasks[0].threads, 12u);
  EXPECT_EQ(t.tasks[0].vsz, Bytes{5} << 30);
  ASSERT_EQ(t.gpu_util.size(), 2u);
  EXPECT_DOUBLE_EQ(t.gpu_util[0].busy_percent, 12.5);
  EXPECT_FALSE(t.gpu_util[0].tree_busy_percent);
  EXPECT_FALSE(t.gpu_util[0].pcie_rx_bytes_per_s);
  EXPECT_EQ(t.gpu_util[1].device, 1);
  EXPECT_NEAR(*t.gpu_util[1].tree_busy_percent, 33.3, 1e-9);
  EXPECT_NEAR(*t.gpu_util[1].pcie_rx_bytes_per_s, 1.5e9, 0.5);
  EXPECT_NEAR(*t.gpu_util[1].pcie_tx_bytes_per_s, 2e6, 0.5);
}

TEST(UsageLines, BadValuesAreFileLineErrors) {
  const std::string head = "QPROF 1 version=t interval=0.1 host=h root_pid=1 start=1\nMEM 1.0 1.0\n";
  const auto error_of = [&](const std::string& line) -> std::string {
    try {
      trace::read_trace_text(head + line + "\n", "bad.dat");
    } catch (const trace::ParseError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of("GPUUTIL 1.5 0 180 3 - - -").find("bad.dat:3:"), std::string::npos);
  EXPECT_NE(error_of("GPUUTIL 1.5 0 18 3 x - -").find("not a number"), std::string::npos);
  EXPECT_NE(error_of("KINDS 1.5 1 2 -3 4").find("bad.dat:3:"), std::string::npos);
  EXPECT_NE(error_of("TASKS 1.5 1").find("missing"), std::string::npos);
  EXPECT_EQ(error_of("TASKS 1.5 1 2 3 appended"), "") << "fields appended to a known kind are skipped";
}

Trace stage_trace(double gpu_percent, double read_per_s, double cpu_cores) {
  Trace t;
  t.meta.format_version = 1;
  for (int i = 0; i <= 40; ++i) {
    const double s = 0.1 * i;
    t.mem.push_back({s, Bytes{100} << 20});
    t.io.push_back({s, static_cast<Bytes>(read_per_s * s), 0, 0, 0});
    t.cpu.push_back({s, cpu_cores * s});
    t.gpu_util.push_back({s, 0, gpu_percent, 1, std::nullopt, std::nullopt, std::nullopt});
  }
  t.stages.push_back(Stage{"Load", 0.5, 3.5, Bytes{100} << 20, Bytes{150} << 20, true, Stage::Source::markers});
  return t;
}

TEST(Bottleneck, NumbersAndVerdictOfAStage) {
  const auto b = stage_bottlenecks(stage_trace(12, 410e6, 0.5));
  ASSERT_EQ(b.size(), 1u);
  EXPECT_NEAR(*b[0].gpu_mean_percent, 12, 1e-9);
  EXPECT_NEAR(*b[0].read_mean_bytes_per_s, 410e6, 410e6 * 0.01);
  EXPECT_NEAR(*b[0].cpu_mean_percent, 50, 0.5);
  EXPECT_EQ(*b[0].memory_growth, std::int64_t{50} << 20);
  EXPECT_TRUE(b[0].input_bound);
  EXPECT_EQ(b[0].verdict, "GPU busy 12 % while reading 410 MB/s: likely input-bound");
}

TEST(Bottleneck, GrowthOfBytesBeyondWhatInt64HoldsDoesNotOverflow) {
  Trace t = stage_trace(12, 0, 0.5);
  t.stages[0].mem_start = 0;
  t.stages[0].mem_end = ~Bytes{0};
  EXPECT_EQ(*stage_bottlenecks(t)[0].memory_growth, std::numeric_limits<std::int64_t>::max());
  std::swap(t.stages[0].mem_start, t.stages[0].mem_end);
  EXPECT_EQ(*stage_bottlenecks(t)[0].memory_growth, -std::numeric_limits<std::int64_t>::max());
}

TEST(Bottleneck, ThresholdsDecide) {
  EXPECT_FALSE(stage_bottlenecks(stage_trace(kGpuIdleBelowPercent, 410e6, 0.5))[0].input_bound) << "GPU busy enough";
  EXPECT_FALSE(stage_bottlenecks(stage_trace(12, 10e6, 0.5))[0].input_bound) << "neither reading nor computing";
  const auto cpu = stage_bottlenecks(stage_trace(12, 0, 1.8));
  EXPECT_TRUE(cpu[0].input_bound);
  EXPECT_EQ(cpu[0].verdict, "GPU busy 12 % while the CPU runs at 180 % of one core: likely input-bound");
  // A stage that never used the GPU (data built on the CPU, workers asleep holding GPU memory)
  // starves nothing: numbers, no verdict.
  for (double idle : {0.0, kGpuUsedPercent - 1}) {
    const auto unused = stage_bottlenecks(stage_trace(idle, 410e6, 0.95));
    EXPECT_FALSE(unused[0].input_bound) << idle;
    EXPECT_TRUE(unused[0].verdict.empty()) << unused[0].verdict;
    EXPECT_TRUE(unused[0].gpu_mean_percent.has_value());
  }
  EXPECT_TRUE(stage_bottlenecks(stage_trace(kGpuUsedPercent, 410e6, 0.95))[0].input_bound);
  Trace no_gpu = stage_trace(12, 410e6, 0.5);
  no_gpu.gpu_util.clear();
  const auto n = stage_bottlenecks(no_gpu);
  EXPECT_FALSE(n[0].gpu_mean_percent);
  EXPECT_FALSE(n[0].input_bound);
  EXPECT_TRUE(n[0].verdict.empty());
  EXPECT_TRUE(n[0].cpu_mean_percent.has_value()) << "the CPU and I/O numbers are still given";
}

}  // namespace
}  // namespace qprof
