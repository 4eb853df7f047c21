// SPDX-License-Identifier: Apache-2.0
// The GPU sampler over a scripted in-process backend (exact schedules, fallbacks, trace lines)
// and over the fake NVML (the helper thread, the whole path).
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

namespace qprof::gpu {
using trace::Trace;
using trace::TraceMeta;

namespace {

constexpr Bytes MiB = Bytes{1} << 20;
constexpr Bytes GiB = Bytes{1} << 30;
constexpr std::int64_t kMs = 1'000'000;

// A backend whose answers the test sets.
class Scripted : public Backend {
 public:
  struct Proc {
    pid_t pid;
    Bytes bytes;  // kUnknown: listed without a figure
  };
  explicit Scripted(std::size_t n, bool lists_everything = true) : every_(lists_everything) {
    for (std::size_t i = 0; i < n; ++i) {
      Device d;
      d.uuid = "GPU-" + std::to_string(i) + "000";
      d.name = "Fake GPU " + std::to_string(i);
      d.total = 16 * GiB;
      d.vendor_index = static_cast<int>(i);
      devices_.push_back(d);
    }
    used_.assign(n, 0);
    procs_.resize(n);
    status_.assign(n, DeviceProcesses::Status::ok);
  }
  std::string_view name() const override { return "scripted"; }
  std::string description() const override { return "scripted"; }
  const std::vector<Device>& devices() const override { return devices_; }
  bool lists_every_process() const override { return every_; }
  bool cuda_devices() const override { return true; }
  bool device_used(std::span<Bytes> used) noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    ++device_calls;
    for (std::size_t i = 0; i < used.size(); ++i) used[i] = used_[i];
    return true;
  }
  bool process_usage(std::span<const pid_t> pids, std::span<DeviceProcesses> out) noexcept override {
    if (delay_us > 0) usleep(static_cast<useconds_t>(delay_us.load()));
    std::lock_guard<std::mutex> lock(mu_);
    ++process_calls;
    last_pids.assign(pids.begin(), pids.end());
    for (std::size_t i = 0; i < out.size(); ++i) {
      DeviceProcesses r;
      r.status = status_[i];
      for (const Proc& p : procs_[i]) {
        ++r.listed;
        if (std::find(pids.begin(), pids.end(), p.pid) == pids.end()) continue;
        ++r.matched;
        if (p.bytes == kUnknown) {
          ++r.unknown;
        } else {
          r.tree += p.bytes;
        }
      }
      out[i] = r;
    }
    return true;
  }

  void set_used(std::size_t d, Bytes b) {
    std::lock_guard<std::mutex> lock(mu_);
    used_[d] = b;
  }
  void set_procs(std::size_t d, std::vector<Proc> p) {
    std::lock_guard<std::mutex> lock(mu_);
    procs_[d] = std::move(p);
  }
  void set_status(std::size_t d, DeviceProcesses::Status s) {
    std::lock_guard<std::mutex> lock(mu_);
    status_[d] = s;
  }

  std::atomic<int> device_calls{0};
  std::atomic<int> process_calls{0};
  std::atomic<long> delay_us{0};
  std::vector<pid_t> last_pids;

 private:
  bool every_;
  std::mutex mu_;
  std::vector<Device> devices_;
  std::vector<Bytes> used_;
  std::vector<std::vector<Proc>> procs_;
  std::vector<DeviceProcesses::Status> status_;
};

// A trace file the test reads back.
class TraceFile {
 public:
  TraceFile() : path_(dir_.file("t.dat")), out_(std::make_unique<trace::Writer>(path_)) {
    TraceMeta m;
    m.format_version = trace::kFormatVersion;
    out_->header(m);
    out_->mem(1.0, 1);
  }
  trace::Writer& out() { return *out_; }
  Trace read() {
    out_->flush();
    return trace::read_trace(path_);
  }

 private:
  test::ScratchDir dir_;
  std::string path_;
  std::unique_ptr<trace::Writer> out_;
};

// Queries on the calling thread. A generous budget, so that a test preempted on a loaded machine
// does not see its schedule stretched; the budget's own tests set theirs.
SamplerOptions inline_options(std::int64_t interval_ns = 100 * kMs) {
  SamplerOptions o;
  o.process_thread = false;
  o.process_interval_ns = interval_ns;
  o.cpu_budget = 0.5;
  return o;
}

Seconds unix_of(std::int64_t ns) { return 1000.0 + static_cast<double>(ns) * 1e-9; }

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
  std::string why;
  auto backend = open_nvml(oo, why);
  ASSERT_TRUE(backend) << why;
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
