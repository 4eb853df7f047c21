// SPDX-License-Identifier: Apache-2.0
// The GPU sampler over a scripted in-process backend: exact schedules, budgets, trace lines and
// the helper thread (fallbacks, device choice and the fake NVML are in gpu_sampler_fallback_test.cpp).
#include "qprof/gpu/sampler.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <mutex>
#include <thread>

#include "gpu_test_util.hpp"
#include "qprof/common/clock.hpp"
#include "qprof/trace/format.hpp"
#include "gpu_sampler_fixtures.hpp"

namespace qprof::gpu {
using trace::Trace;
using trace::TraceMeta;

namespace {

using namespace sampler_fixtures;  // NOLINT: the fixtures are this file's vocabulary

// The query costs and the driver's lags are judged on it (SteadyCost, NvmlUtil).
TEST(LeastOfLatest, IgnoresAPassingRiseAndFollowsALastingOne) {
  LeastOfLatest<std::int64_t, 4> l;
  EXPECT_EQ(l.least(), 0) << "nothing added";
  l.add(10);
  l.add(500);  // a preempted query
  l.add(12);
  EXPECT_EQ(l.least(), 10);
  for (int k = 0; k < 3; ++k) l.add(40);
  EXPECT_EQ(l.least(), 12) << "10 has left the latest four";
  l.add(40);
  EXPECT_EQ(l.least(), 40) << "a rise that lasts four values";
  EXPECT_EQ(l.count(), 7u);
  l.add(-3);
  EXPECT_EQ(l.least(), -3);
}

TEST(GpuSampler, WritesEachDeviceOnceAndItsFiguresEverySample) {
  auto backend = std::make_unique<Scripted>(2);
  Scripted& b = *backend;
  b.set_used(0, GiB);
  b.set_used(1, 2 * GiB);
  b.set_procs(0, {{10, 300 * MiB}, {99, 500 * MiB}});
  Sampler s(std::move(backend), inline_options());
  TraceFile f;
  const std::vector<pid_t> tree{11, 10};
  for (int i = 0; i < 5; ++i) s.sample(i * 10 * kMs, unix_of(i * 10 * kMs), tree, f.out());
  const Trace t = f.read();
  ASSERT_EQ(t.gpu_devices.size(), 2u);
  EXPECT_EQ(t.gpu_devices[0].index, 0);
  EXPECT_EQ(t.gpu_devices[0].uuid, "GPU-0000");
  EXPECT_EQ(t.gpu_devices[0].name, "Fake GPU 0");
  EXPECT_EQ(t.gpu_devices[0].total, 16 * GiB);
  EXPECT_EQ(t.gpu_devices[1].uuid, "GPU-1000");
  ASSERT_EQ(t.gpu.size(), 10u);
  EXPECT_EQ(t.gpu[0].device, 0);
  EXPECT_EQ(t.gpu[0].tree, 300 * MiB);  // 99 is not the tree's
  EXPECT_EQ(t.gpu[0].used, GiB);
  EXPECT_EQ(t.gpu[1].device, 1);
  EXPECT_EQ(t.gpu[1].tree, 0u);
  EXPECT_EQ(t.gpu[1].used, 2 * GiB);
  EXPECT_NEAR(t.gpu[8].t, 1000.04, 1e-6);
  EXPECT_EQ(b.last_pids, (std::vector<pid_t>{10, 11})) << "sorted for the backend";
  const Summary sum = s.summary();
  EXPECT_EQ(sum.backend, "scripted");
  EXPECT_EQ(sum.samples, 5u);
  EXPECT_EQ(sum.peak_tree_total, 300 * MiB);
  ASSERT_EQ(sum.devices.size(), 2u);
  EXPECT_EQ(sum.devices[0].peak_tree, 300 * MiB);
  EXPECT_EQ(sum.devices[1].peak_used, 2 * GiB);
  EXPECT_FALSE(sum.any_device_total);
}

TEST(GpuSampler, ProcessQueriesKeepTheirOwnSlowerScheduleAndTheLatestFigureIsReused) {
  auto backend = std::make_unique<Scripted>(1);
  Scripted& b = *backend;
  b.set_procs(0, {{10, 100 * MiB}});
  Sampler s(std::move(backend), inline_options(100 * kMs));
  TraceFile f;
  const std::vector<pid_t> tree{10};
  for (std::int64_t ms = 0; ms < 1000; ++ms) {
    if (ms == 450) b.set_procs(0, {{10, 200 * MiB}});
    s.sample(ms * kMs, unix_of(ms * kMs), tree, f.out());
  }
  EXPECT_EQ(b.process_calls, 10) << "every 100 ms of 1 s";
  EXPECT_EQ(b.device_calls, 1000) << "device totals on every call";
  const Trace t = f.read();
  ASSERT_EQ(t.gpu.size(), 1000u);
  EXPECT_EQ(t.gpu[499].tree, 100 * MiB) << "the query of 400 ms, reused until the next";
  EXPECT_EQ(t.gpu[500].tree, 200 * MiB);
  EXPECT_EQ(s.summary().process_queries, 10u);
  EXPECT_EQ(s.summary().process_interval_ns, 100 * kMs) << "never faster than asked, no slower when cheap";
}

// Seen on an H200 (bench/gpu_real.sh): a checkpoint's line held the tree's fresh 1542 MiB beside
// the device's 527 MiB read 16 ms earlier. A new per-process figure is written beside a device
// total read after it was asked for.
TEST(GpuSampler, ACheckpointsTreeFigureComesWithADeviceTotalReadAfterIt) {
  auto backend = std::make_unique<Scripted>(1);
  Scripted& b = *backend;
  b.set_used(0, 1536 * MiB);
  b.set_procs(0, {{10, 1024 * MiB}});
  SamplerOptions o = inline_options(100 * kMs);
  o.device_interval_ns = 50 * kMs;  // device totals thinned, as a slow driver's are
  Sampler s(std::move(backend), o);
  TraceFile f;
  const std::vector<pid_t> tree{10};
  s.sample(0, unix_of(0), tree, f.out());
  b.set_used(0, 2560 * MiB);
  b.set_procs(0, {{10, 2048 * MiB}});
  s.sample_checkpoint(10 * kMs, unix_of(10 * kMs), tree, f.out());
  const Trace t = f.read();
  ASSERT_EQ(t.gpu.size(), 2u);
  EXPECT_EQ(t.gpu[1].tree, 2048 * MiB);
  EXPECT_EQ(t.gpu[1].used, 2560 * MiB) << "not the total of 10 ms before, below the tree's figure";
}

// The device's use falls between two process queries: the tree's older figure is above what the
// whole device holds now, so the tree holds no more than that (also seen on the H200: 1542 MiB
// of the tree beside 527 MiB of the device for 30 ms after a cudaFree).
TEST(GpuSampler, AnOlderTreeFigureAboveTheDevicesTotalIsCutToIt) {
  auto backend = std::make_unique<Scripted>(1);
  Scripted& b = *backend;
  b.set_used(0, 2560 * MiB);
  b.set_procs(0, {{10, 2048 * MiB}});
  Sampler s(std::move(backend), inline_options(100 * kMs));
  TraceFile f;
  const std::vector<pid_t> tree{10};
  s.sample(0, unix_of(0), tree, f.out());
  b.set_used(0, 528 * MiB);
  b.set_procs(0, {{10, 518 * MiB}});
  s.sample(30 * kMs, unix_of(30 * kMs), tree, f.out());    // the process query of 0 ms stands
  s.sample(100 * kMs, unix_of(100 * kMs), tree, f.out());  // a new one
  const Trace t = f.read();
  ASSERT_EQ(t.gpu.size(), 3u);
  EXPECT_EQ(t.gpu[0].tree, 2048 * MiB);
  EXPECT_EQ(t.gpu[1].tree, 528 * MiB) << "cut to the device's total";
  ASSERT_TRUE(t.gpu[1].tree_age);
  EXPECT_GT(*t.gpu[1].tree_age, 0.029) << "still the older query's";
  EXPECT_EQ(t.gpu[2].tree, 518 * MiB);
  EXPECT_EQ(s.summary().devices[0].peak_tree, 2048 * MiB);
}

TEST(GpuSampler, SlowProcessQueriesStretchTheirScheduleToTheBudget) {
  auto backend = std::make_unique<Scripted>(1);
  Scripted& b = *backend;
  b.delay_us = 3000;  // 3 ms a query: at 1.5 % of a core, one every 200 ms or more
  SamplerOptions o = inline_options(20 * kMs);
  o.cpu_budget = 0.02;
  Sampler s(std::move(backend), o);
  TraceFile f;
  const std::vector<pid_t> tree{10};
  for (std::int64_t ms = 0; ms < 2000; ms += 2) s.sample(ms * kMs, unix_of(ms * kMs), tree, f.out());
  EXPECT_GE(s.summary().process_interval_ns, 200 * kMs);
  EXPECT_LE(b.process_calls, 11);
  EXPECT_GE(b.process_calls, 2);
  EXPECT_GE(s.summary().process_query_ns, 3 * kMs);
}

// A cold first query and a preempted one (30 ms each, 300 times the others) leave the schedule
// as asked; a lasting rise (3 ms every query from the 40th on) stretches it after eight queries.
// Judged by each cost or an average, the first alone held the queries 2 s apart.
TEST(GpuSampler, OneSlowProcessQueryDoesNotStretchTheScheduleALastingRiseDoes) {
  auto backend = std::make_unique<Scripted>(1);
  Scripted& b = *backend;
  SamplerOptions o = inline_options(20 * kMs);
  o.cpu_budget = 0.02;
  Sampler s(std::move(backend), o);
  TraceFile f;
  const std::vector<pid_t> tree{10};
  std::int64_t ms = 0;
  for (; b.process_calls < 40; ms += 2) {
    ASSERT_LT(ms, 1200) << b.process_calls << " queries: the schedule was stretched";
    b.delay_us = (b.process_calls == 0 || b.process_calls == 20) ? 30'000 : 0;
    s.sample(ms * kMs, unix_of(ms * kMs), tree, f.out());
  }
  EXPECT_EQ(s.summary().process_interval_ns, 20 * kMs);
  EXPECT_LE(ms, 800) << "40 queries 20 ms apart";
  b.delay_us = 3000;  // 3 ms at 1.5 % of a core: 200 ms apart or more, once the latest eight are slow
  const int before = b.process_calls;
  for (const std::int64_t end = ms + 3000; ms < end; ms += 2) s.sample(ms * kMs, unix_of(ms * kMs), tree, f.out());
  EXPECT_GE(s.summary().process_interval_ns, 200 * kMs);
  EXPECT_GE(b.process_calls - before, 8);
  EXPECT_LE(b.process_calls - before, 8 + 16) << "then one every 200 ms or more";
}

TEST(GpuSampler, SlowDeviceQueriesAreThinnedToTheBudget) {
  class SlowDevices : public Scripted {
   public:
    SlowDevices() : Scripted(1) {}
    bool device_used(std::span<Bytes> used) noexcept override {
      usleep(500);
      return Scripted::device_used(used);
    }
  };
  auto backend = std::make_unique<SlowDevices>();
  Scripted& b = *backend;
  SamplerOptions o = inline_options();
  o.cpu_budget = 0.02;
  Sampler s(std::move(backend), o);
  TraceFile f;
  const std::vector<pid_t> tree{10};
  for (std::int64_t ms = 0; ms < 1000; ++ms) s.sample(ms * kMs, unix_of(ms * kMs), tree, f.out());
  // 0.5 ms at half a percent of a core: one every 100 ms or more, after the first two (the
  // first call alone does not thin: a cold driver or a preempted thread).
  EXPECT_LE(b.device_calls, 12);
  EXPECT_GE(b.device_calls, 2);
}

TEST(GpuSampler, AHelperThreadRunsProcessQueriesWithoutDelayingSamples) {
  auto backend = std::make_unique<Scripted>(1);
  Scripted& b = *backend;
  b.delay_us = 200'000;  // a driver call stuck for 200 ms
  b.set_procs(0, {{10, 64 * MiB}});
  SamplerOptions o;
  o.process_interval_ns = 100 * kMs;
  Sampler s(std::move(backend), o);
  TraceFile f;
  const std::vector<pid_t> tree{10};
  const std::int64_t t0 = monotonic_ns();
  s.sample(monotonic_ns(), 1000.0, tree, f.out());
  s.sample(monotonic_ns(), 1000.1, tree, f.out());
  const std::int64_t took = monotonic_ns() - t0;
  EXPECT_LT(took, 150 * kMs) << "the samples did not wait for the query";
  ASSERT_TRUE(s.wait_process_query(10'000 * kMs));
  s.sample(monotonic_ns(), 1000.2, tree, f.out());
  const Trace t = f.read();
  ASSERT_GE(t.gpu.size(), 2u);  // the second sample came too soon for new device totals
  EXPECT_EQ(t.gpu.front().tree, 0u);
  EXPECT_EQ(t.gpu.back().tree, 64 * MiB);
  EXPECT_EQ(b.process_calls, 1);
}

}  // namespace
}  // namespace qprof::gpu
