// NVML's busy-time figures for the nvml backend: utilisation rates (SM and memory bandwidth),
// the per-process SM share (summed over the tree), and PCIe throughput. Entry points looked up
// in the already dlopen'ed library; each one missing leaves its figure unknown.
#pragma once

#include <sys/types.h>

#include <span>
#include <vector>

#include "qprof/gpu/backend.hpp"

namespace qprof::gpu::detail {

class NvmlUtil {
 public:
  // `handles`: NVML device handles, in the backend's device order.
  void open(void* lib, std::vector<void*> handles);
  bool available() const { return rates_ != nullptr; }
  bool device_util(std::span<const pid_t> pids, std::span<DeviceUtil> out) noexcept;
  bool pcie_throughput(std::span<DeviceUtil> out) noexcept;

  // nvmlProcessUtilizationSample_t (x86-64 and aarch64 layout).
  struct ProcessSample {
    unsigned int pid;
    unsigned long long time_stamp;  // µs, CPU clock
    unsigned int sm_util, mem_util, enc_util, dec_util;
  };

 private:
  struct Rates {
    unsigned int gpu, memory;
  };
  using Handle = struct nvmlUtilDevice_st*;
  using RatesFn = int (*)(Handle, Rates*);
  using ProcessFn = int (*)(Handle, ProcessSample*, unsigned int*, unsigned long long);
  using PcieFn = int (*)(Handle, int, unsigned int*);

  // The tree's SM %: each of its processes' mean over the samples since the last query, summed.
  std::optional<double> tree_share(std::size_t device, std::span<const pid_t> pids);

  RatesFn rates_ = nullptr;
  ProcessFn process_ = nullptr;
  PcieFn pcie_ = nullptr;
  std::vector<Handle> handles_;
  std::vector<unsigned long long> last_seen_;  // per device: the newest sample already counted
  std::vector<ProcessSample> samples_;
};

}  // namespace qprof::gpu::detail
