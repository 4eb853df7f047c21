// SPDX-License-Identifier: Apache-2.0
// What GPU queries cost qprof, over the fakes (no GPU needed): the NVML backend's device and
// process queries through the fake libnvidia-ml.so.1, the AMD backend over the fixture tree, and
// the GPU sampler's fast path (device totals + GPU lines), which runs on every host sample.
// On a machine with a GPU, QPROF_BENCH_REAL_NVML=1 measures the real libnvidia-ml.so.1 instead.
#include <benchmark/benchmark.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "qprof/common/clock.hpp"
#include "qprof/gpu/backend.hpp"
#include "qprof/gpu/sampler.hpp"

namespace {

using namespace qprof;
using namespace qprof::gpu;

const std::string kScript = "/tmp/qprof-gpu-bench-" + std::to_string(getpid()) + ".script";
struct RemoveScript {
  ~RemoveScript() { std::remove(kScript.c_str()); }
} remove_script;

std::unique_ptr<Backend> nvml() {
  if (!std::getenv("QPROF_BENCH_REAL_NVML")) {
    std::ofstream(kScript) << "device GPU-11111111-2222-3333-4444-555555555555 85899345920 1073741824 NVIDIA H100\n"
                              "compute 100 268435456\ngraphics 100 1048576\ncompute 999 536870912\n"
                              "util 80 30\nprocess_util 100 60\nprocess_util 999 20\npcie 1024 512\n"
                              "device GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee 25769803776 536870912 NVIDIA A5000\n"
                              "compute 101 1048576\n";
    ::setenv("QPROF_FAKE_NVML_SCRIPT", kScript.c_str(), 1);
  }
  OpenOptions o;
  if (!std::getenv("QPROF_BENCH_REAL_NVML")) o.nvml_library = QPROF_BENCH_FAKE_NVML;
  auto opened = open_nvml(o);
  return opened ? std::move(*opened) : nullptr;
}

void BM_NvmlDeviceUsed(benchmark::State& state) {
  auto b = nvml();
  if (!b) return state.SkipWithError("no NVML");
  std::vector<Bytes> used(b->devices().size());
  for (auto _ : state) benchmark::DoNotOptimize(b->device_used(used));
  state.counters["devices"] = static_cast<double>(used.size());
}
BENCHMARK(BM_NvmlDeviceUsed);

void BM_NvmlProcessUsage(benchmark::State& state) {
  auto b = nvml();
  if (!b) return state.SkipWithError("no NVML");
  std::vector<DeviceProcesses> out(b->devices().size());
  const std::vector<pid_t> tree{100, 101, 102};
  for (auto _ : state) benchmark::DoNotOptimize(b->process_usage(tree, out));
}
BENCHMARK(BM_NvmlProcessUsage);

// Busy time: utilisation rates and the process utilisation list (with each process query).
void BM_NvmlDeviceUtil(benchmark::State& state) {
  auto b = nvml();
  if (!b) return state.SkipWithError("no NVML");
  std::vector<DeviceUtil> out(b->devices().size());
  const std::vector<pid_t> tree{100, 101, 102};
  for (auto _ : state) benchmark::DoNotOptimize(b->device_util(tree, out));
}
BENCHMARK(BM_NvmlDeviceUtil);

// PCIe throughput: NVML samples each counter over 20 ms on a real driver.
void BM_NvmlPcieThroughput(benchmark::State& state) {
  auto b = nvml();
  if (!b) return state.SkipWithError("no NVML");
  std::vector<DeviceUtil> out(b->devices().size());
  for (auto _ : state) benchmark::DoNotOptimize(b->pcie_throughput(out));
}
BENCHMARK(BM_NvmlPcieThroughput)->Unit(benchmark::kMicrosecond);

void BM_AmdFixtureProcessUsage(benchmark::State& state) {
  OpenOptions o;
  o.proc_root = QPROF_BENCH_DRM_FIXTURE "/proc";
  o.sys_root = QPROF_BENCH_DRM_FIXTURE "/sys";
  auto opened = open_amd(o);
  if (!opened) return state.SkipWithError(opened.failure().message.c_str());
  auto b = std::move(*opened);
  std::vector<DeviceProcesses> out(b->devices().size());
  const std::vector<pid_t> tree{100, 101, 102, 103};
  for (auto _ : state) benchmark::DoNotOptimize(b->process_usage(tree, out));
}
BENCHMARK(BM_AmdFixtureProcessUsage);

// One call of Sampler::sample() between process queries: device totals and the GPU lines.
void BM_SamplerFastPath(benchmark::State& state) {
  auto b = nvml();
  if (!b) return state.SkipWithError("no NVML");
  SamplerOptions o;
  o.process_interval_ns = 3600LL * 1'000'000'000;  // one process query, at the first call
  o.cpu_budget = 1e9;                              // no thinning: every call reads the devices
  Sampler s(std::move(b), o);
  trace::Writer out("/dev/null");
  const std::vector<pid_t> tree{100, 101, 102};
  std::int64_t now = monotonic_ns();
  for (auto _ : state) {
    now += 1'000'000;
    s.sample(now, 1.0, tree, out);
  }
  out.flush();
}
BENCHMARK(BM_SamplerFastPath);

}  // namespace

BENCHMARK_MAIN();
