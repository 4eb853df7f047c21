// SPDX-License-Identifier: Apache-2.0
// The GPU sampler's fallbacks to device totals (PID namespaces, refused or empty process lists,
// failed queries), CUDA_VISIBLE_DEVICES, the tree's peak over devices, and the fake NVML.
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

TEST(GpuSampler, APidNamespaceFallsBackToDeviceTotalsWithOneWarning) {
  auto backend = std::make_unique<Scripted>(1);
  Scripted& b = *backend;
  b.set_used(0, 500 * MiB);      // other tenants, before the job
  b.set_procs(0, {{88123, 0}});  // the job under its host PID, which is not the tree's
  Sampler s(std::move(backend), inline_options(10 * kMs));
  TraceFile f;
  const std::vector<pid_t> tree{12};
  std::int64_t now = 0;
  auto step = [&](Bytes used, Bytes job) {
    b.set_used(0, used);
    b.set_procs(0, {{88123, job}});
    for (int i = 0; i < 3; ++i, now += 10 * kMs) s.sample(now, unix_of(now), tree, f.out());
  };
  step(500 * MiB, 0);
  EXPECT_FALSE(s.has_warnings());
  step(540 * MiB, 40 * MiB);  // a rise under the threshold (64 MiB): not yet
  EXPECT_FALSE(s.has_warnings());
  step(2 * GiB, 1536 * MiB);
  ASSERT_TRUE(s.has_warnings());
  const auto w = s.take_warnings();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("PID namespace"), std::string::npos) << w[0];
  EXPECT_NE(w[0].find("GPU-0000"), std::string::npos) << w[0];
  step(3 * GiB, 2560 * MiB);
  step(GiB, 512 * MiB);
  EXPECT_FALSE(s.has_warnings()) << "said once";
  const Trace t = f.read();
  EXPECT_EQ(t.gpu.back().tree, GiB) << "the device total stands in for the tree";
  EXPECT_EQ(t.gpu.back().used, GiB);
  EXPECT_EQ(t.gpu[2].tree, 0u);
  const Summary sum = s.summary();
  EXPECT_TRUE(sum.any_device_total);
  EXPECT_TRUE(sum.devices[0].tree_is_device_total);
  EXPECT_EQ(sum.devices[0].peak_tree, 3 * GiB);
}

TEST(GpuSampler, AForeignTenantAloneIsNotAPidNamespace) {
  auto backend = std::make_unique<Scripted>(1);
  Scripted& b = *backend;
  Sampler s(std::move(backend), inline_options(10 * kMs));
  TraceFile f;
  const std::vector<pid_t> tree{12};
  b.set_procs(0, {{12, 10 * MiB}, {777, 0}});  // the tree is seen: the PIDs are ours
  std::int64_t now = 0;
  for (int i = 0; i < 5; ++i, now += 10 * kMs) s.sample(now, unix_of(now), tree, f.out());
  b.set_used(0, 8 * GiB);
  b.set_procs(0, {{777, 8 * GiB}});  // the tree left the GPU; another tenant grows
  for (int i = 0; i < 5; ++i, now += 10 * kMs) s.sample(now, unix_of(now), tree, f.out());
  EXPECT_FALSE(s.has_warnings());
  EXPECT_EQ(f.read().gpu.back().tree, 0u);
  EXPECT_FALSE(s.summary().any_device_total);
}

TEST(GpuSampler, RefusedProcessListsFallBackToDeviceTotalsWhenTheDeviceMoves) {
  auto backend = std::make_unique<Scripted>(2);
  Scripted& b = *backend;
  b.set_status(0, DeviceProcesses::Status::unavailable);
  b.set_status(1, DeviceProcesses::Status::unavailable);
  Sampler s(std::move(backend), inline_options(10 * kMs));
  TraceFile f;
  const std::vector<pid_t> tree{12};
  std::int64_t now = 0;
  for (int i = 0; i < 3; ++i, now += 10 * kMs) s.sample(now, unix_of(now), tree, f.out());
  b.set_used(1, 4 * GiB);
  for (int i = 0; i < 3; ++i, now += 10 * kMs) s.sample(now, unix_of(now), tree, f.out());
  const auto w = s.take_warnings();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("GPU-1000: per-process GPU memory cannot be read here"), std::string::npos) << w[0];
  const Trace t = f.read();
  EXPECT_EQ(t.gpu.back().device, 1);
  EXPECT_EQ(t.gpu.back().tree, 4 * GiB);
  EXPECT_EQ(t.gpu[t.gpu.size() - 2].tree, 0u) << "device 0 did not move: no fallback there";
  EXPECT_FALSE(s.summary().devices[0].tree_is_device_total);
  EXPECT_TRUE(s.summary().devices[1].tree_is_device_total);
}

TEST(GpuSampler, TreeProcessesWithoutFiguresUseTheDeviceTotal) {
  auto backend = std::make_unique<Scripted>(1);
  Scripted& b = *backend;
  b.set_used(0, 3 * GiB);
  b.set_procs(0, {{12, kUnknown}});
  Sampler s(std::move(backend), inline_options(10 * kMs));
  TraceFile f;
  const std::vector<pid_t> tree{12};
  s.sample(0, unix_of(0), tree, f.out());
  const auto w = s.take_warnings();
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("without their memory"), std::string::npos) << w[0];
  EXPECT_EQ(f.read().gpu.back().tree, 3 * GiB);
  // The figures come back: per-process again, and said so.
  b.set_procs(0, {{12, GiB}});
  s.sample(20 * kMs, unix_of(20 * kMs), tree, f.out());
  EXPECT_EQ(f.read().gpu.back().tree, GiB);
  const auto w2 = s.take_warnings();
  ASSERT_EQ(w2.size(), 1u);
  EXPECT_NE(w2[0].find("per-process figures are available again"), std::string::npos) << w2[0];
  EXPECT_TRUE(s.summary().devices[0].tree_is_device_total) << "the trace holds device totals for a while";
}

TEST(GpuSampler, AFailedQueryChangesNoFallbackAndNothingIsSaidTwice) {
  auto backend = std::make_unique<Scripted>(1);
  Scripted& b = *backend;
  b.set_used(0, 3 * GiB);
  Sampler s(std::move(backend), inline_options(10 * kMs));
  TraceFile f;
  const std::vector<pid_t> tree{12};
  std::int64_t now = 0;
  auto sample = [&] {
    s.sample(now, unix_of(now), tree, f.out());
    now += 10 * kMs;
  };
  b.set_procs(0, {{12, kUnknown}});
  sample();
  EXPECT_EQ(s.take_warnings().size(), 1u);
  b.set_status(0, DeviceProcesses::Status::failed);
  sample();
  EXPECT_FALSE(s.has_warnings()) << "a failed query is no news";
  EXPECT_EQ(f.read().gpu.back().tree, 3 * GiB);
  b.set_status(0, DeviceProcesses::Status::ok);
  for (int i = 0; i < 3; ++i) {
    b.set_procs(0, {{12, GiB}});
    sample();
    b.set_procs(0, {{12, kUnknown}});
    sample();
  }
  EXPECT_EQ(s.take_warnings().size(), 1u) << "back to per-process: said once, however often it flaps";
}

TEST(GpuSampler, CudaVisibleDevicesChoosesWhichDevicesAreRecordedFromTheStart) {
  auto backend = std::make_unique<Scripted>(3);
  Scripted& b = *backend;
  SamplerOptions o = inline_options(10 * kMs);
  o.cuda_visible_devices = "GPU-2000";
  Sampler s(std::move(backend), o);
  TraceFile f;
  const std::vector<pid_t> tree{12};
  s.sample(0, unix_of(0), tree, f.out());
  Trace t = f.read();
  ASSERT_EQ(t.gpu_devices.size(), 1u);
  EXPECT_EQ(t.gpu_devices[0].uuid, "GPU-2000");
  EXPECT_EQ(t.gpu_devices[0].index, 0);
  // A child that resets CUDA_VISIBLE_DEVICES uses GPU 0 anyway: recorded from then on.
  b.set_procs(0, {{12, 128 * MiB}});
  s.sample(20 * kMs, unix_of(20 * kMs), tree, f.out());
  t = f.read();
  ASSERT_EQ(t.gpu_devices.size(), 2u);
  EXPECT_EQ(t.gpu_devices[1].uuid, "GPU-0000");
  EXPECT_EQ(t.gpu_devices[1].index, 1);
  ASSERT_EQ(t.gpu.size(), 3u);  // GPU-2000 twice, GPU-0000 once
  EXPECT_EQ(t.gpu[1].device, 1) << "written in the backend's order";
  EXPECT_EQ(t.gpu[1].tree, 128 * MiB);
  EXPECT_EQ(t.gpu[2].device, 0);
  const Summary sum = s.summary();
  EXPECT_FALSE(sum.devices[0].visible);
  EXPECT_EQ(sum.devices[0].index, 1);
  EXPECT_EQ(sum.devices[1].index, -1) << "never recorded";
  EXPECT_TRUE(sum.devices[2].visible);
}

TEST(GpuSampler, AnEmptyCudaVisibleDevicesRecordsNothingUntilTheTreeUsesAGpu) {
  auto backend = std::make_unique<Scripted>(2);
  SamplerOptions o = inline_options(10 * kMs);
  o.cuda_visible_devices = "";
  Sampler s(std::move(backend), o);
  TraceFile f;
  s.sample(0, unix_of(0), std::vector<pid_t>{12}, f.out());
  EXPECT_TRUE(f.read().gpu_devices.empty());
  EXPECT_EQ(s.summary().samples, 0u);
}

TEST(GpuSampler, TakesTheTreesPidsInAnyOrder) {
  auto backend = std::make_unique<Scripted>(1);
  Scripted& b = *backend;
  b.set_procs(0, {{21, 5 * MiB}, {20, 7 * MiB}});
  Sampler s(std::move(backend), inline_options());
  TraceFile f;
  s.sample(0, unix_of(0), std::vector<pid_t>{21, 20}, f.out());
  EXPECT_EQ(b.last_pids, (std::vector<pid_t>{20, 21}));
  EXPECT_EQ(f.read().gpu.back().tree, 12 * MiB);
}

TEST(GpuSampler, WithoutABackendItDoesNothing) {
  Sampler s(nullptr);
  EXPECT_FALSE(s.enabled());
  EXPECT_FALSE(s.last_tree_total());
  TraceFile f;
  s.sample(0, 1.0, std::vector<pid_t>{1}, f.out());
  EXPECT_TRUE(f.read().gpu.empty());
  EXPECT_EQ(s.summary().backend, "");
}

TEST(GpuSampler, PeakOfTheTreeSumsDevicesAtOneSample) {
  auto backend = std::make_unique<Scripted>(2);
  Scripted& b = *backend;
  Sampler s(std::move(backend), inline_options(10 * kMs));
  TraceFile f;
  const std::vector<pid_t> tree{12};
  b.set_procs(0, {{12, 3 * GiB}});
  s.sample(0, unix_of(0), tree, f.out());
  b.set_procs(0, {{12, GiB}});
  b.set_procs(1, {{12, GiB}});
  s.sample(20 * kMs, unix_of(20 * kMs), tree, f.out());
  b.set_procs(1, {{12, 3 * GiB}});
  s.sample(40 * kMs, unix_of(40 * kMs), tree, f.out());
  EXPECT_EQ(s.last_tree_total(), 4 * GiB);
  const Summary sum = s.summary();
  EXPECT_EQ(sum.peak_tree_total, 4 * GiB);
  EXPECT_DOUBLE_EQ(sum.peak_tree_total_t, unix_of(40 * kMs));
  EXPECT_EQ(sum.devices[0].peak_tree, 3 * GiB);
  EXPECT_DOUBLE_EQ(sum.devices[0].peak_tree_t, unix_of(0));
  EXPECT_EQ(sum.devices[1].peak_tree, 3 * GiB);
}

// The whole path with the fake NVML and the helper thread: a tree process and a foreign one.
TEST(GpuSampler, OverTheFakeNvmlOnAHelperThread) {
  test::FakeNvmlScript script(
      "device GPU-11111111-2222-3333-4444-555555555555 85899345920 1073741824 NVIDIA H100 80GB HBM3\n"
      "compute 4000 268435456\n"
      "compute 4001 536870912\n");
  OpenOptions oo;
  oo.nvml_library = test::fake_nvml();
  auto opened = open_nvml(oo);
  ASSERT_TRUE(opened.ok()) << opened.failure().message;
  auto backend = std::move(*opened);
  SamplerOptions o;
  o.process_interval_ns = 50 * kMs;
  Sampler s(std::move(backend), o);
  TraceFile f;
  const std::vector<pid_t> tree{4000, 17};
  const std::int64_t start = monotonic_ns();
  while (monotonic_ns() - start < 400 * kMs) {
    const std::int64_t now = monotonic_ns();
    s.sample(now, unix_of(now), tree, f.out());
    usleep(2000);
  }
  s.stop();
  // The fake counted the process-list calls: one compute call per query of the one device.
  const long calls = test::fake_nvml_calls(test::fake_nvml(), "nvmlDeviceGetComputeRunningProcesses_v3");
  const long queries = static_cast<long>(s.summary().process_queries);
  EXPECT_GE(calls, queries);
  EXPECT_LE(calls, queries + 1) << "a query still in flight at stop() ran but was not taken";
  EXPECT_LE(calls, 9) << "400 ms at one query per 50 ms";
  EXPECT_GT(test::fake_nvml_calls(test::fake_nvml(), "nvmlDeviceGetMemoryInfo_v2"), calls)
      << "device totals are faster";
  const Trace t = f.read();
  ASSERT_EQ(t.gpu_devices.size(), 1u);
  ASSERT_FALSE(t.gpu.empty());
  EXPECT_EQ(t.gpu.back().tree, 256 * MiB);
  EXPECT_EQ(t.gpu.back().used, GiB);
  const Summary sum = s.summary();
  EXPECT_GE(sum.process_queries, 2u);
  EXPECT_LE(sum.process_queries, 9u) << "every 50 ms at most";
  EXPECT_EQ(sum.devices[0].peak_tree, 256 * MiB);
  EXPECT_LT(sum.query_time_share, 0.05);
}

}  // namespace
}  // namespace qprof::gpu
