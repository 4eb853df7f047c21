// NVML's busy-time figures for the nvml backend: utilisation rates (SM and memory bandwidth),
// the per-process SM share (summed over the tree), and PCIe throughput. Entry points looked up
// in the already dlopen'ed library; each one missing leaves its figure unknown.
#pragma once

#include <sys/types.h>

#include <cstdint>
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

  // The tree's SM %: its processes' samples in the latest answer that held any, over the sample
  // periods that answer spans.
  std::optional<double> tree_share(std::size_t device, std::span<const pid_t> pids);
  // A process's samples in the latest answer, summed.
  struct Held {
    unsigned int pid;
    double sm_sum;
  };
  double held_share(std::size_t device, std::span<const pid_t> pids) const;
  void hold(std::size_t device, unsigned int n, unsigned long long previous);
  void forget(std::size_t device);
  void restart(std::size_t device);
  long long driver_now(std::size_t device, long long wall_us) const;

  RatesFn rates_ = nullptr;
  ProcessFn process_ = nullptr;
  PcieFn pcie_ = nullptr;
  std::vector<Handle> handles_;
  std::vector<unsigned long long> last_seen_;  // per device: the newest sample's stamp
  std::vector<unsigned long long> period_us_;  // per device: the driver's sample period (0: not seen yet)
  std::vector<std::vector<Held>> held_;        // per device: the latest answer's processes
  std::vector<unsigned int> held_periods_;     // per device: the sample periods it spans (0: none yet)
  std::vector<LeastOfLatest<long long>> lags_; // per device: our clock − newest stamp (µs) of the latest answers
  std::vector<unsigned long long> since_;      // per device: the driver's time the tree left it (0: it did not)
  std::vector<std::int64_t> answered_ns_;      // per device: monotonic time of the latest answer
  std::vector<bool> unsupported_;              // per device: the driver refused the share
  std::vector<ProcessSample> samples_;
};

}  // namespace qprof::gpu::detail
