#include "nvml_util.hpp"

#include <dlfcn.h>

#include <algorithm>

#include "common.hpp"

namespace qprof::gpu::detail {
namespace {

constexpr int kSuccess = 0;
constexpr int kInsufficientSize = 7;
constexpr int kNotFound = 6;
constexpr int kPcieTxBytes = 0;  // NVML_PCIE_UTIL_TX_BYTES
constexpr int kPcieRxBytes = 1;  // NVML_PCIE_UTIL_RX_BYTES
constexpr double kPcieUnit = 1024;  // NVML reports KB/s
constexpr unsigned kMaxSamples = 1u << 16;

static_assert(sizeof(NvmlUtil::ProcessSample) == 32);

template <class F>
F sym(void* lib, const char* name) {
  return reinterpret_cast<F>(::dlsym(lib, name));
}

}  // namespace

void NvmlUtil::open(void* lib, std::vector<void*> handles) {
  rates_ = sym<RatesFn>(lib, "nvmlDeviceGetUtilizationRates");
  process_ = sym<ProcessFn>(lib, "nvmlDeviceGetProcessUtilization");
  pcie_ = sym<PcieFn>(lib, "nvmlDeviceGetPcieThroughput");
  for (void* h : handles) handles_.push_back(static_cast<Handle>(h));
  last_seen_.assign(handles_.size(), 0);
  samples_.resize(64);
}

std::optional<double> NvmlUtil::tree_share(std::size_t device, std::span<const pid_t> pids) {
  if (!process_) return std::nullopt;
  unsigned int n = static_cast<unsigned int>(samples_.size());
  int rc = process_(handles_[device], samples_.data(), &n, last_seen_[device]);
  if (rc == kInsufficientSize && n > samples_.size() && n <= kMaxSamples) {
    samples_.resize(n);  // grows to the driver's buffer once, then stays
    rc = process_(handles_[device], samples_.data(), &n, last_seen_[device]);
  }
  if (rc == kNotFound) return 0.0;  // no process ran a kernel since the last query
  if (rc != kSuccess) return std::nullopt;
  n = std::min<unsigned int>(n, static_cast<unsigned int>(samples_.size()));
  // Each process's mean over its samples in this window, summed over the tree's processes.
  std::sort(samples_.begin(), samples_.begin() + n,
            [](const ProcessSample& a, const ProcessSample& b) { return a.pid < b.pid; });
  double share = 0;
  for (unsigned int i = 0; i < n;) {
    unsigned int j = i;
    double sum = 0;
    for (; j < n && samples_[j].pid == samples_[i].pid; ++j) {
      sum += samples_[j].sm_util;
      last_seen_[device] = std::max(last_seen_[device], samples_[j].time_stamp);
    }
    if (has_pid(pids, static_cast<pid_t>(samples_[i].pid))) share += sum / (j - i);
    i = j;
  }
  return std::min(share, 100.0);
}

bool NvmlUtil::device_util(std::span<const pid_t> pids, std::span<DeviceUtil> out) noexcept {
  if (!rates_) return false;
  bool any = false;
  try {
    for (std::size_t i = 0; i < handles_.size() && i < out.size(); ++i) {
      DeviceUtil& u = out[i];
      u.valid = false;
      Rates r{};
      if (rates_(handles_[i], &r) != kSuccess) continue;
      u.valid = true;
      u.sm = std::min(r.gpu, 100u);
      u.mem_bw = std::min(r.memory, 100u);
      u.tree_sm = tree_share(i, pids);
      any = true;
    }
  } catch (...) {  // a failed allocation: this query is lost
    return false;
  }
  return any;
}

bool NvmlUtil::pcie_throughput(std::span<DeviceUtil> out) noexcept {
  if (!pcie_) return false;
  bool any = false;
  for (std::size_t i = 0; i < handles_.size() && i < out.size(); ++i) {
    unsigned int rx = 0, tx = 0;
    if (pcie_(handles_[i], kPcieRxBytes, &rx) == kSuccess && pcie_(handles_[i], kPcieTxBytes, &tx) == kSuccess) {
      out[i].pcie_rx = rx * kPcieUnit;
      out[i].pcie_tx = tx * kPcieUnit;
      any = true;
    } else {
      out[i].pcie_rx.reset();
      out[i].pcie_tx.reset();
    }
  }
  return any;
}

}  // namespace qprof::gpu::detail
