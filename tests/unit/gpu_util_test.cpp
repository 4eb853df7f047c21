// SPDX-License-Identifier: Apache-2.0
// GPU busy time: NVML's utilisation rates, per-process SM share and PCIe throughput through the
// fake libnvidia-ml.so.1, amdgpu's gpu_busy_percent through a fake sysfs tree, and the GPUUTIL
// lines the GPU sampler writes from them.
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

namespace qprof::gpu {
using trace::GpuUtilSample;
using trace::Trace;
using trace::TraceMeta;

namespace {

using test::FakeNvmlScript;
using test::ScratchDir;

const char* kBusyGpus =
    "device GPU-11111111-2222-3333-4444-555555555555 85899345920 1073741824 NVIDIA H100\n"
    "util 87 41\n"
    "compute 100 268435456\n"  // the tree's processes have contexts here
    "compute 101 1048576\n"
    "compute 999 1048576\n"  // and another tenant's: the device is shared
    "process_util 100 50\n"  // the tree's
    "process_util 101 20\n"  // the tree's
    "process_util 999 17\n"  // another tenant's
    "pcie 2048 1024\n"
    "device GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee 25769803776 536870912 NVIDIA RTX A5000\n";  // no figures

std::unique_ptr<Backend> open_fake() {
  OpenOptions o;
  o.nvml_library = test::fake_nvml("full");
  std::string why;
  auto b = open_nvml(o, why);
  EXPECT_TRUE(b) << why;
  return b;
}

// Calls of the costly entry point so far (the fake counts them).
long process_util_calls() { return test::fake_nvml_calls(test::fake_nvml("full"), "nvmlDeviceGetProcessUtilization"); }

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

// The fake stamps its samples with the script's mtime: a test sets it to place them in time.
void stamp_samples(const FakeNvmlScript& script, double seconds_ago) {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  const auto ns =
      static_cast<long long>(now.tv_sec) * 1'000'000'000LL + now.tv_nsec - static_cast<long long>(seconds_ago * 1e9);
  const timespec times[2] = {{ns / 1'000'000'000LL, ns % 1'000'000'000LL},
                             {ns / 1'000'000'000LL, ns % 1'000'000'000LL}};
  ASSERT_EQ(::utimensat(AT_FDCWD, script.path().c_str(), times, 0), 0);
}

// One GPU of the fake, busy, whose process_util lines a test sets, each version stamped
// `seconds_ago` (see stamp_samples).
struct OneGpu {
  static constexpr const char* kGpu =
      "device GPU-11111111-2222-3333-4444-555555555555 85899345920 1073741824 NVIDIA H100\n"
      "util 100 10\n";
  OneGpu(const std::string& samples, double seconds_ago) : script(kGpu + samples) {
    stamp_samples(script, seconds_ago);
    b = open_fake();
  }
  void set(const std::string& samples, double seconds_ago) {
    script.set(kGpu + samples);
    stamp_samples(script, seconds_ago);
  }
  FakeNvmlScript script;
  std::unique_ptr<Backend> b;
  std::vector<DeviceUtil> u = std::vector<DeviceUtil>(1);
};

// The fake with kBusyGpus, opened, and room for its two devices' figures.
struct BusyGpus {
  FakeNvmlScript script{kBusyGpus};
  std::unique_ptr<Backend> b = open_fake();
  std::vector<DeviceUtil> u = std::vector<DeviceUtil>(2);
};

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

// GPUUTIL lines of a sampler into a trace. By default it queries inline, one query per `query`:
// each 0.2 s apart on the sampler's clock (the per-process queries' period is 0.1 s).
struct SampledTrace {
  explicit SampledTrace(const std::string& name, SamplerOptions options = inline_queries())
      : path(dir.file(name)), w(path), s(open_fake(), std::move(options)) {
    TraceMeta meta;
    meta.qprof_version = "test";
    w.header(meta);
    w.mem(1000.0, 1 << 20);
  }
  static SamplerOptions inline_queries() {
    SamplerOptions so;
    so.process_thread = false;
    return so;
  }
  void query(std::span<const pid_t> tree) {
    at(1'000'000'000 + 200'000'000LL * n, tree);
    ++n;
  }
  // A sample at `ns` on the sampler's clock (1000 s of Unix time at 1 s).
  void at(std::int64_t ns, std::span<const pid_t> tree) {
    s.sample(ns, 999.0 + static_cast<double>(ns) * 1e-9, tree, w);
  }
  Trace finish() {
    s.stop();
    w.close();
    return trace::read_trace(path);
  }
  ScratchDir dir;
  std::string path;
  trace::Writer w;
  Sampler s;
  int n = 0;
};

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

void put(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

// On a node of several GPUs, the tree's share is asked only of the devices it shares: the call
// costs milliseconds a device on a real driver (bench/nvml_probe.py).
TEST(GpuUtil, TheTreesShareIsAskedOnlyOfDevicesItShares) {
  FakeNvmlScript script(
      "device GPU-11111111-2222-3333-4444-555555555555 85899345920 1073741824 NVIDIA H100\n"
      "util 90 10\ncompute 100 268435456\ncompute 998 1048576\nprocess_util 100 90\n"  // shared
      "device GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee 85899345920 1073741824 NVIDIA H100\n"
      "util 50 5\ncompute 999 268435456\nprocess_util 999 50\n");  // another tenant's GPU
  SampledTrace q("util.dat");
  const std::vector<pid_t> tree{100};
  long before = process_util_calls();
  q.query(tree);
  EXPECT_EQ(process_util_calls() - before, 2) << "the first query asks the second GPU once: does it give the share?";
  before = process_util_calls();
  for (int k = 0; k < 3; ++k) q.query(tree);
  EXPECT_EQ(process_util_calls() - before, 3) << "then the first GPU only (no sample period learnt: at each query)";
  const Trace t = q.finish();
  ASSERT_EQ(t.gpu_util.size(), 8u);
  for (const GpuUtilSample& g : t.gpu_util) {
    ASSERT_TRUE(g.tree_busy_percent);
    EXPECT_DOUBLE_EQ(*g.tree_busy_percent, g.device == 0 ? 90 : 0) << "device " << g.device;
  }
}

// A driver that refuses the share (a product without it, a container without the right) gives
// no figure anywhere: not 0 where the tree has no process, then none where it has.
TEST(GpuUtil, ADriverThatRefusesTheShareGivesNoFigureEvenWhereTheTreeIsAbsent) {
  for (const int refusal : {3, 4}) {  // Not Supported, No Permission
    const std::string gpu =
        "device GPU-11111111-2222-3333-4444-555555555555 85899345920 1073741824 NVIDIA H100\n"
        "util 90 10\ncompute 999 268435456\nprocess_util_error " +
        std::to_string(refusal) + "\n";
    FakeNvmlScript script(gpu);
    SampledTrace q("refused.dat");
    const std::vector<pid_t> tree{100};
    const long before = process_util_calls();
    for (int k = 0; k < 3; ++k) q.query(tree);  // absent
    script.set(gpu + "compute 100 1048576\n");
    for (int k = 0; k < 2; ++k) q.query(tree);  // shared
    EXPECT_EQ(process_util_calls() - before, 1) << refusal << ": asked once, then known refused";
    const Trace t = q.finish();
    ASSERT_EQ(t.gpu_util.size(), 5u);
    for (const GpuUtilSample& g : t.gpu_util) EXPECT_FALSE(g.tree_busy_percent) << refusal << " at " << g.t;
  }
}

// Where the tree is a device's only tenant, the device's busy % is the tree's: the per-process
// call (milliseconds of CPU on a real driver) is made once, to learn that the driver gives the
// share at all, and not again until another process comes.
TEST(GpuUtil, TheTreeAloneOnADeviceHasItsBusyPercentWithoutThePerProcessCall) {
  const std::string gpu =
      "device GPU-11111111-2222-3333-4444-555555555555 85899345920 1073741824 NVIDIA H100\n"
      "util 64 20\ncompute 100 268435456\ngraphics 100 0\nprocess_util 100 90\n";
  FakeNvmlScript script(gpu);
  SampledTrace q("alone.dat");
  const std::vector<pid_t> tree{100};
  const long before = process_util_calls();
  for (int k = 0; k < 4; ++k) q.query(tree);
  EXPECT_EQ(process_util_calls() - before, 1) << "one call, whose answer (90) is not the device's figure";
  // Another tenant: the tree's own figure from its processes' samples, asked of the driver.
  script.set(gpu + "compute 999 1048576\nprocess_util 999 30\n");
  q.query(tree);
  EXPECT_EQ(process_util_calls() - before, 2);
  const Trace t = q.finish();
  ASSERT_EQ(t.gpu_util.size(), 5u);
  for (std::size_t k = 0; k < t.gpu_util.size(); ++k) {
    ASSERT_TRUE(t.gpu_util[k].tree_busy_percent) << k;
    EXPECT_DOUBLE_EQ(*t.gpu_util[k].tree_busy_percent, k < 4 ? 64 : 90) << "line " << k;
  }
}

// Every tenant is known only when both process lists were read, or the graphics list does not
// exist (Not Supported: a compute-only GPU). One that failed, or was refused to us, may hold
// another process: the tree's share is then asked of the driver.
TEST(GpuUtil, OnlyAGraphicsListReadOrNotSupportedLetsTheTreeBeKnownAlone) {
  for (const auto& [error, share] : {std::pair{999, 90.0}, std::pair{4, 90.0}, std::pair{3, 64.0}}) {
    FakeNvmlScript script(
        "device GPU-11111111-2222-3333-4444-555555555555 85899345920 1073741824 NVIDIA H100\n"
        "util 64 20\ncompute 100 268435456\ngraphics_error " +
        std::to_string(error) + "\nprocess_util 100 90\n");
    SampledTrace q("unknown.dat");
    const std::vector<pid_t> tree{100};
    for (int k = 0; k < 3; ++k) q.query(tree);
    const Trace t = q.finish();
    ASSERT_EQ(t.gpu_util.size(), 3u);
    for (const GpuUtilSample& g : t.gpu_util) {
      ASSERT_TRUE(g.tree_busy_percent) << error;
      EXPECT_DOUBLE_EQ(*g.tree_busy_percent, share) << "graphics list error " << error;
    }
  }
}

// Alone, the tree's share is the device's; when a tenant comes, the driver is asked for the
// periods of the last second, not for all since its one answer at the start.
TEST(GpuUtil, AfterATimeAloneTheWindowStartsASecondBack) {
  const std::string gpu =
      "device GPU-11111111-2222-3333-4444-555555555555 85899345920 1073741824 NVIDIA H100\n"
      "util 64 20\ncompute 100 268435456\n";
  FakeNvmlScript script(gpu + "process_util 100 40\n");
  SampledTrace q("window.dat");
  const std::vector<pid_t> tree{100};
  for (int k = 0; k < 3; ++k) q.query(tree);  // one call: its answer is the sample of now
  usleep(2'000'000);
  // A tenant, and the tree's samples since: 90 of 1.5 s ago (after the one answer, out of the
  // last second however late this query runs by up to half a second), 20 of now.
  script.set(gpu + "compute 999 1048576\nprocess_util 100 90 1500\nprocess_util 100 20 0\nprocess_util 999 50 0\n");
  q.query(tree);
  const Trace t = q.finish();
  ASSERT_EQ(t.gpu_util.size(), 4u);
  ASSERT_TRUE(t.gpu_util[3].tree_busy_percent);
  EXPECT_DOUBLE_EQ(*t.gpu_util[3].tree_busy_percent, 20) << "not (90 + 20) / 2 = 55: the time alone is not asked again";
}

// While the tree has no process on a device, the driver's samples there are other tenants':
// when the tree comes back, its share counts the periods since, not those it was away.
TEST(GpuUtil, TheTreesShareCountsNoPeriodOfItsAbsence) {
  OneGpu g("process_util 100 90\n", 0);
  auto& [script, b, u] = g;
  ASSERT_TRUE(b);
  const std::vector<pid_t> tree{100};
  ASSERT_TRUE(b->device_util(tree, u));
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 90);
  usleep(1'000'000);
  u[0].tenancy = DeviceUtil::Tenancy::absent;  // the tree's process left the device: seen at this query
  ASSERT_TRUE(b->device_util(tree, u));
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 0);
  usleep(100'000);
  // Back: a tenant's sample of 0.9 s ago (after the tree's last answer, before the query that saw
  // it away, however late this runs on a loaded machine), and the tree's of now.
  g.set("process_util 999 10 900\nprocess_util 100 60 0\n", 0);
  u[0].tenancy = DeviceUtil::Tenancy::shared;
  ASSERT_TRUE(b->device_util(tree, u));
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 60) << "the window starts where it came back: not ceil(60 / 2 periods) = 30";
}

// Clocks set or drifting apart: the driver's clock is told from the lags of the latest answers
// only, so that the schedule of calls follows it, and an answer lapses on the monotonic clock,
// so that a lag that changed never makes new answers look old.
TEST(GpuUtil, TheDriversClockIsFollowedWhenItFallsBack) {
  OneGpu g("process_util 100 70\n", -2.0);  // the driver's clock 2 s ahead of ours
  auto& [script, b, u] = g;
  ASSERT_TRUE(b);
  const std::vector<pid_t> tree{100};
  ASSERT_TRUE(b->device_util(tree, u));
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 70);
  usleep(2'100'000);
  // Then it agrees with ours (set back by 2 s), sampling every 0.3 s or so: each gap a little
  // longer than the one before, so that no sample is due a mere hair after the least lag says.
  for (int k = 0; k < 9; ++k) {
    if (k > 0) usleep(static_cast<useconds_t>(300'000 + 20'000 * k));
    g.set("process_util 100 " + std::to_string(40 + k) + "\n", 0);
    ASSERT_TRUE(b->device_util(tree, u));
    EXPECT_DOUBLE_EQ(*u[0].tree_busy, 40 + k) << "answer " << k << ": new, whatever the lag said";
  }
  // The next sample is 0.3 s away on the driver's clock, now that the 2 s lead is forgotten.
  const long calls = process_util_calls();
  ASSERT_TRUE(b->device_util(tree, u));
  EXPECT_EQ(process_util_calls(), calls);
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 48);
}

TEST(GpuUtil, AmdGpuBusyPercentFromSysfs) {
  ScratchDir root;
  const std::string drm = root.path() + "/sys/class/drm/";
  put(drm + "card0/device/uevent", "DRIVER=amdgpu\nPCI_SLOT_NAME=0000:03:00.0\n");
  put(drm + "card0/device/mem_info_vram_total", "25753026560\n");
  put(drm + "card0/device/gpu_busy_percent", "63\n");
  put(drm + "card0/device/mem_busy_percent", "12\n");
  put(drm + "card1/device/uevent", "DRIVER=amdgpu\nPCI_SLOT_NAME=0000:04:00.0\n");  // an older kernel: no busy files
  OpenOptions o;
  o.sys_root = root.path() + "/sys";
  o.proc_root = root.path() + "/proc";
  std::string why;
  auto b = open_amd(o, why);
  ASSERT_TRUE(b) << why;
  ASSERT_EQ(b->devices().size(), 2u);
  std::vector<DeviceUtil> u(2);
  ASSERT_TRUE(b->device_util(std::vector<pid_t>{1}, u));
  EXPECT_TRUE(u[0].valid);
  EXPECT_DOUBLE_EQ(u[0].busy, 63);
  EXPECT_DOUBLE_EQ(u[0].mem_bw, 12);
  EXPECT_FALSE(u[0].tree_busy) << "amdgpu has no per-process share";
  EXPECT_FALSE(u[1].valid);
  EXPECT_FALSE(b->pcie_throughput(u));
  // The files are re-read on each query.
  put(drm + "card0/device/gpu_busy_percent", "5\n");
  ASSERT_TRUE(b->device_util(std::vector<pid_t>{1}, u));
  EXPECT_DOUBLE_EQ(u[0].busy, 5);
}

}  // namespace
}  // namespace qprof::gpu
