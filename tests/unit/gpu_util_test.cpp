// SPDX-License-Identifier: Apache-2.0
// GPU busy time: NVML's utilisation rates, per-process SM share and PCIe throughput through the
// fake libnvidia-ml.so.1, and the GPUUTIL lines the GPU sampler writes from them (the tree's
// share in its corner cases, and amdgpu, are in gpu_util_share_test.cpp).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "e2e/e2e_util.hpp"
#include "gpu_test_util.hpp"
#include "qprof/gpu/backend.hpp"
#include "qprof/gpu/sampler.hpp"
#include "qprof/trace/format.hpp"
#include "gpu_util_fixtures.hpp"

namespace qprof::gpu {
using trace::GpuUtilSample;
using trace::Trace;
using trace::TraceMeta;

namespace {

using namespace util_fixtures;  // NOLINT: the fixtures are this file's vocabulary
using test::FakeNvmlScript;
using test::ScratchDir;

TEST(GpuUtil, NvmlRatesTreeShareAndPcie) {
  FakeNvmlScript script(kBusyGpus);
  auto b = open_fake();
  ASSERT_TRUE(b);
  std::vector<DeviceUtil> u(2);
  const std::vector<pid_t> tree{100, 101, 102};
  ASSERT_TRUE(b->device_util(tree, u));
  EXPECT_TRUE(u[0].valid);
  EXPECT_DOUBLE_EQ(u[0].busy, 87);
  EXPECT_DOUBLE_EQ(u[0].mem_bw, 41);
  ASSERT_TRUE(u[0].tree_busy);
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 70) << "50 + 20, not the other tenant's 17";
  EXPECT_FALSE(u[1].valid) << "the second GPU does not say";
  // Nothing newer than the last seen: the driver's next sample is not due yet (a real one
  // samples every 1/6 s to 1 s, idle processes included), so the latest samples stand.
  ASSERT_TRUE(b->device_util(tree, u));
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 70);
  ASSERT_TRUE(b->pcie_throughput(u));
  EXPECT_DOUBLE_EQ(*u[0].pcie_rx, 2048.0 * 1024);
  EXPECT_DOUBLE_EQ(*u[0].pcie_tx, 1024.0 * 1024);
  EXPECT_FALSE(u[1].pcie_rx);
  EXPECT_GT(process_util_calls(), 0);
}

TEST(GpuUtil, TheTreesShareIsTheLatestAnswerUntilItLapses) {
  BusyGpus g;
  auto& [script, b, u] = g;
  ASSERT_TRUE(b);
  const std::vector<pid_t> tree{100, 101};
  ASSERT_TRUE(b->device_util(tree, u));
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 70);
  const std::vector<pid_t> one{100};
  ASSERT_TRUE(b->device_util(one, u));
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 50) << "the latest answer, for the tree of now";
  // No new sample for longer than the longest sample period and a half: the processes have no
  // context there any more.
  usleep(1'600'000);
  ASSERT_TRUE(b->device_util(tree, u));
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 0);
}

// The first call asks for what is newer than a second ago: asked from 0, a real driver answers its
// whole buffer, stamped seconds back (bench/nvml_answers.py on an H200).
TEST(GpuUtil, TheFirstWindowStartsASecondAgo) {
  OneGpu g("process_util 999 100 1500\nprocess_util 999 100 1200\nprocess_util 100 20 0\n", 0);
  auto& [script, b, u] = g;
  ASSERT_TRUE(b);
  ASSERT_TRUE(b->device_util(std::vector<pid_t>{100}, u));
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 20) << "not ceil(20 / 3 periods) = 7: the tenant's samples are older";
}

// A driver whose clock is behind ours by more than a second answers once its clock has passed
// where the first window began: the window stays there.
TEST(GpuUtil, TheFirstWindowWaitsForADriverBehindUs) {
  OneGpu behind("process_util 100 40\n", 1.3);  // the driver's clock 1.3 s behind ours
  ASSERT_TRUE(behind.b->device_util(std::vector<pid_t>{100}, behind.u));
  EXPECT_DOUBLE_EQ(*behind.u[0].tree_busy, 0) << "nothing newer than a second ago on our clock";
  usleep(300'000);
  // 0.3 s later, two new samples: 0.95 and 0.8 s before our clock's time at the first call, so
  // newer than where the window began (a second before that call), not than a second before now.
  behind.set("process_util 100 80 150\nprocess_util 100 60 0\n", 1.1);
  ASSERT_TRUE(behind.b->device_util(std::vector<pid_t>{100}, behind.u));
  EXPECT_DOUBLE_EQ(*behind.u[0].tree_busy, 70) << "(80 + 60) / 2: the two samples newer than where the window began";
}

// Calls are spaced by the driver's sample period once it is learnt: one figure per process is
// all an answer holds, so the period is the gap between two answers' newest samples, but only
// when no sample can lie between them (the call before found nothing, and came just before).
TEST(GpuUtil, NoCallIsMadeBeforeTheDriversNextSampleIsDue) {
  OneGpu g("process_util 100 40\n", 0);
  auto& [script, b, u] = g;
  ASSERT_TRUE(b);
  const std::vector<pid_t> tree{100};
  const auto calls = process_util_calls;
  ASSERT_TRUE(b->device_util(tree, u));
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 40);
  // A loaded machine may stall the test between a call and the next sample for longer than the
  // proof allows (83 ms): then the next rounds learn it.
  bool learnt = false;
  for (int round = 0; round < 5 && !learnt; ++round) {
    usleep(200'000);
    ASSERT_TRUE(b->device_util(tree, u));  // nothing newer
    g.set("process_util 100 60\n", 0);     // the driver's next sample, just after that call
    ASSERT_TRUE(b->device_util(tree, u));
    EXPECT_DOUBLE_EQ(*u[0].tree_busy, 60);
    const long before = calls();
    ASSERT_TRUE(b->device_util(tree, u));
    learnt = calls() == before;
  }
  ASSERT_TRUE(learnt) << "the period (0.2 s) never learnt";
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 60) << "between two samples the latest answer stands";
  EXPECT_DOUBLE_EQ(u[0].busy, 100) << "the rates are read every time (a microsecond)";
  // Once it is due, the driver is asked again.
  const long before = calls();
  usleep(300'000);
  ASSERT_TRUE(b->device_util(tree, u));
  EXPECT_GT(calls(), before);
}

// Seen on an H200 (bench/nvml_answers.py): calls once a second learnt a period of a second from the
// gap between their answers, and kept it, while the driver sampled every 0.2 s. A gap after
// which the call before came long before the sample may hold several periods: it is not taken.
TEST(GpuUtil, AGapThatMayHoldSeveralPeriodsIsNotTakenForThePeriod) {
  OneGpu g("process_util 100 40\n", 0);
  auto& [script, b, u] = g;
  ASSERT_TRUE(b);
  const std::vector<pid_t> tree{100};
  ASSERT_TRUE(b->device_util(tree, u));
  usleep(1'000'000);
  g.set("process_util 100 60\n", 0);  // 1 s after the last call and the last sample
  ASSERT_TRUE(b->device_util(tree, u));
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 60);
  const long before = process_util_calls();
  ASSERT_TRUE(b->device_util(tree, u));
  EXPECT_GT(process_util_calls(), before) << "no period learnt: the driver is asked";
}

// The driver's stamps need not be on our clock (seen ahead of it on an H200 VM): when the next
// sample is due is judged on the driver's clock, told from the lag of its answers.
TEST(GpuUtil, StampsAheadOfOurClockDoNotDelayTheNextCall) {
  // The driver's clock runs 0.4 s ahead of ours: this sample is 0.2 s old on it.
  OneGpu g("process_util 100 40\n", -0.2);
  auto& [script, b, u] = g;
  ASSERT_TRUE(b);
  const std::vector<pid_t> tree{100};
  ASSERT_TRUE(b->device_util(tree, u));
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 40);
  g.set("process_util 100 60\n", -0.4);  // 0.2 s later: the driver samples every 0.2 s
  ASSERT_TRUE(b->device_util(tree, u));
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 60);
  g.set("process_util 100 90\n", -0.65);  // the next sample, 0.25 s later on the driver's clock
  const long calls = process_util_calls();
  usleep(250'000);  // due 0.2 s after the last on the driver's clock; 0.6 s on ours
  ASSERT_TRUE(b->device_util(tree, u));
  EXPECT_GT(process_util_calls(), calls);
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 90);
}

// Seen on an H200 (bench/nvml_answers.py): with two processes taking turns, each sample period is
// credited to the process whose turn it was, and each process's figure is its samples over all
// the periods of the window: the tree's share is the sum of its processes' figures.
TEST(GpuUtil, ProcessesTakingTurnsShareThePeriodsOfAnAnswer) {
  OneGpu g("process_util 100 99 600\n", 0);
  auto& [script, b, u] = g;
  ASSERT_TRUE(b);
  ASSERT_TRUE(b->device_util(std::vector<pid_t>{100}, u));  // the first answer: up to 600 ms ago
  g.set(
      "process_util 100 99 400\n"  // the tree's turn
      "process_util 200 99 200\n"  // another tenant's turn
      "process_util 100 99 0\n"    // the tree's again
      "process_util 101 30 0\n",   // a second tree process in the same period
      0);
  ASSERT_TRUE(b->device_util(std::vector<pid_t>{100}, u));
  ASSERT_TRUE(u[0].tree_busy);
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 66) << "the driver's (99 + 99) / 3 periods";
  ASSERT_TRUE(b->device_util(std::vector<pid_t>{100, 101}, u));
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 76) << "66 + 10 (30 / 3), stamped apart: summed, not divided again";
  ASSERT_TRUE(b->device_util(std::vector<pid_t>{200}, u));
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 33);
}

TEST(GpuUtil, SamplerWritesGpuUtilLinesWithTheProcessQuery) {
  FakeNvmlScript script(kBusyGpus);
  SampledTrace q("util.dat");  // inline: the test decides when queries run
  const std::vector<pid_t> tree{100, 101};
  q.at(1'000'000'000, tree);
  q.at(1'010'000'000, tree);  // before the next process query: no new GPUUTIL
  q.at(1'200'000'000, tree);
  q.at(2'000'000'000, tree);  // a second after the first query: PCIe too
  q.at(2'200'000'000, tree);  // its figure carried
  const Trace t = q.finish();
  ASSERT_EQ(t.gpu_util.size(), 4u) << "one device says, four queries ran";
  EXPECT_EQ(t.gpu_util[0].device, 0);
  EXPECT_DOUBLE_EQ(t.gpu_util[0].busy_percent, 87);
  EXPECT_DOUBLE_EQ(t.gpu_util[0].mem_bw_percent, 41);
  EXPECT_DOUBLE_EQ(*t.gpu_util[0].tree_busy_percent, 70);
  // NVML samples each PCIe counter for 20 ms: never at the first query, which a short run would
  // wait for at its end, then once a second.
  EXPECT_FALSE(t.gpu_util[0].pcie_rx_bytes_per_s);
  EXPECT_FALSE(t.gpu_util[1].pcie_rx_bytes_per_s);
  for (std::size_t k = 2; k < 4; ++k) {
    ASSERT_TRUE(t.gpu_util[k].pcie_rx_bytes_per_s) << k;
    EXPECT_DOUBLE_EQ(*t.gpu_util[k].pcie_rx_bytes_per_s, 2048.0 * 1024);
  }
  const Summary sum = q.s.summary();
  EXPECT_EQ(sum.pcie_queries, 1u);
  EXPECT_EQ(sum.devices[0].util_samples, 4u);
}

// The PCIe measure (40 ms on a real driver: two counters sampled for 20 ms each) runs on the
// helper thread after its query's figures are handed over: they land without waiting for it.
TEST(GpuUtil, AQuerysFiguresLandBeforeItsPcieMeasureEnds) {
  const std::string gpu =
      "device GPU-11111111-2222-3333-4444-555555555555 85899345920 4294967296 NVIDIA H100\n"
      "util 50 5\npcie 2048 1024\npcie_delay_us 1000000\n";
  FakeNvmlScript script(gpu + "compute 100 268435456\n");
  SampledTrace q("pcie.dat", SamplerOptions{});  // queries on the helper thread
  const std::vector<pid_t> tree{100};
  // Samples at `now` on the sampler's clock (one query at most) until the tree's figure is
  // `want`, for at most `seconds` of real time; whether it came.
  const auto sample_until = [&](std::int64_t now, Bytes want, double seconds) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    for (;;) {
      q.at(now, tree);
      if (q.s.last_tree_total() == want) return true;
      if (std::chrono::steady_clock::now() >= deadline) return false;
      usleep(1000);
    }
  };
  constexpr Bytes kMiB = Bytes{1} << 20;
  ASSERT_TRUE(sample_until(1'000'000'000, 256 * kMiB, 10)) << "the first query (no PCIe measure at it)";
  script.set(gpu + "compute 100 536870912\n");
  // A second after the first query: this one measures PCIe, for 2 s, after it.
  EXPECT_TRUE(sample_until(2'100'000'000, 512 * kMiB, 1.5)) << "the query's figure waited for the measure";
  q.s.stop();  // waits for the measure
  EXPECT_EQ(q.s.summary().pcie_queries, 1u);
}

}  // namespace
}  // namespace qprof::gpu
