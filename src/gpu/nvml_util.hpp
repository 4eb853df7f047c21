// SPDX-License-Identifier: Apache-2.0
// NVML's busy-time figures for the nvml backend: utilisation rates (busy % and memory
// bandwidth), the tree's share of the busy % (per-process figures summed over the tree, or the
// device's own where the tree is its only tenant), and PCIe throughput. Entry points looked up
// in the already dlopen'ed library; each one missing leaves its figure unknown.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "qprof/common/least_of_latest.hpp"
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

  // The tree's busy %: the sum of its processes' figures in the latest answer.
  std::optional<double> tree_share(std::size_t device, std::span<const pid_t> pids);
  // A process's figure in the latest answer: its busy % (NVML's SM %) over the answer's window.
  struct Held {
    unsigned int pid;
    unsigned int busy;
  };
  double held_share(std::size_t device, std::span<const pid_t> pids) const;
  void hold(std::size_t device, unsigned int n);
  void learn_period(std::size_t device, unsigned long long previous, unsigned long long newest);
  void forget(std::size_t device);
  void alone(std::size_t device);
  void restart(std::size_t device);
  long long driver_now(std::size_t device, long long wall_us) const;

  RatesFn rates_ = nullptr;
  ProcessFn process_ = nullptr;
  PcieFn pcie_ = nullptr;
  std::vector<Handle> handles_;
  struct DeviceState {
    unsigned long long last_seen = 0;  // the latest answer's newest stamp (0: the next call starts a window)
    unsigned long long from = 0;       // where that window starts, on the driver's clock (0: a second ago)
    unsigned long long period_us = 0;  // the driver's sample period (0: not learnt yet)
    long long asked_wall_us = 0;       // our clock at the latest call (0: none yet)
    std::vector<Held> held;            // the latest answer's processes
    bool holding = false;              // whether `held` is an answer of the tree's (not one it was away for)
    LeastOfLatest<long long> lags;     // our clock − newest stamp (µs) of the latest answers
    std::int64_t answered_ns = 0;      // monotonic time of the latest answer
    bool unsupported = false;          // the driver refused the share
    bool probed = false;               // the call was made once (then `unsupported` is known)
  };
  std::vector<DeviceState> dev_;  // in handles_' order
  std::vector<ProcessSample> samples_;
};

}  // namespace qprof::gpu::detail
