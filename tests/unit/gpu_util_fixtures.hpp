// SPDX-License-Identifier: Apache-2.0
// What the GPU busy-time tests share: the fake NVML opened with a busy script, one GPU whose
// samples a test sets and stamps, a trace the GPU sampler writes into, a file written into a
// fake sysfs tree.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "gpu_test_util.hpp"
#include "qprof/gpu/backend.hpp"
#include "qprof/gpu/sampler.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::gpu::util_fixtures {
using trace::Trace;
using trace::TraceMeta;

using test::FakeNvmlScript;
using test::ScratchDir;

inline const char* const kBusyGpus =
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

inline std::unique_ptr<Backend> open_fake() {
  OpenOptions o;
  o.nvml_library = test::fake_nvml("full");
  auto opened = open_nvml(o);
  EXPECT_TRUE(opened.ok()) << opened.failure().message;
  auto b = opened ? std::move(*opened) : nullptr;
  return b;
}

// Calls of the costly entry point so far (the fake counts them).
inline long process_util_calls() {
  return test::fake_nvml_calls(test::fake_nvml("full"), "nvmlDeviceGetProcessUtilization");
}

// The fake stamps its samples with the script's mtime: a test sets it to place them in time.
inline void stamp_samples(const FakeNvmlScript& script, double seconds_ago) {
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

inline void put(const std::string& path, const std::string& text) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream(path) << text;
}

}  // namespace qprof::gpu::util_fixtures
