#include "nvml_util.hpp"

#include <dlfcn.h>

#include <time.h>

#include <algorithm>

#include "common.hpp"
#include "qprof/common/clock.hpp"

namespace qprof::gpu::detail {
namespace {

constexpr int kSuccess = 0;
constexpr int kInsufficientSize = 7;
constexpr int kNotFound = 6;
constexpr int kPcieTxBytes = 0;  // NVML_PCIE_UTIL_TX_BYTES
constexpr int kPcieRxBytes = 1;  // NVML_PCIE_UTIL_RX_BYTES
constexpr double kPcieUnit = 1024;  // NVML reports KB/s
constexpr unsigned kMaxSamples = 1u << 16;
// The driver keeps one SM sample per sample period (1/6 s to 1 s depending on the product,
// NVML's documentation; 200 ms on an H200, bench/RESULTS.md), of the process that held the GPU
// then: with one process, that process even when idle (0 %); with two taking turns, only the
// one whose turn it was. So a process's share over an answer is the sum of its samples over the
// periods the answer spans, and the latest answer stands until the next one, for as long as a
// sample period can last and a half (timed on the monotonic clock: wall clocks step).
constexpr std::int64_t kHoldNs = 1'500'000'000;
constexpr long long kHoldUs = kHoldNs / 1000;
constexpr unsigned long long kLongestPeriodUs = 1'000'000;
// Samples stamped closer than this belong to one period (the shortest is 1/6 s).
constexpr unsigned long long kSamePeriodUs = 50'000;
constexpr int kNotSupported = 3;

long long wall_us() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<long long>(ts.tv_sec) * 1'000'000LL + ts.tv_nsec / 1000;
}

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
  period_us_.assign(handles_.size(), 0);
  held_.assign(handles_.size(), {});
  held_periods_.assign(handles_.size(), 0);
  lags_.assign(handles_.size(), {});
  since_.assign(handles_.size(), 0);
  answered_ns_.assign(handles_.size(), 0);
  unsupported_.assign(handles_.size(), false);
  samples_.resize(64);
}

// The driver's clock now, as near as can be told. Its stamps are in µs of wall-clock time, but
// not necessarily of ours: on one H200 VM they ran ahead of it (bench/RESULTS.md). An answer's
// newest sample is never newer than the driver's clock, so our clock less the least lag between
// an answer and its newest sample is not ahead of the driver's: a sample is asked for at most
// that lag late. The least of the latest eight answers only, so that a clock set or drifting
// apart is followed.
long long NvmlUtil::driver_now(std::size_t device, long long wall) const {
  return lags_[device].count() == 0 ? wall : wall - lags_[device].least();
}

void NvmlUtil::restart(std::size_t device) {
  last_seen_[device] = 0;
  period_us_[device] = 0;
  held_periods_[device] = 0;
  since_[device] = 0;
  lags_[device] = {};
}

double NvmlUtil::held_share(std::size_t device, std::span<const pid_t> pids) const {
  if (held_periods_[device] == 0 || monotonic_ns() - answered_ns_[device] > kHoldNs) return 0;
  double sum = 0;
  for (const Held& h : held_[device]) {
    if (has_pid(pids, static_cast<pid_t>(h.pid))) sum += h.sm_sum;
  }
  return std::min(sum / held_periods_[device], 100.0);
}

// Samples [0, n) of samples_ become the latest answer of `device`: each process's sum, and the
// number of sample periods they span. The driver returns every sample newer than the last seen
// (`previous`, 0 when not asked for from there), so the gap from it to the oldest new sample,
// and between the periods of one answer, is a sample period: the smallest seen is the driver's.
void NvmlUtil::hold(std::size_t device, unsigned int n, unsigned long long previous) {
  std::sort(samples_.begin(), samples_.begin() + n,
            [](const ProcessSample& a, const ProcessSample& b) { return a.time_stamp < b.time_stamp; });
  std::vector<Held>& held = held_[device];
  held.clear();  // capacity kept: grows to the most processes of an answer, then stays
  unsigned long long period = period_us_[device];
  unsigned long long start = previous;  // the period being counted began here
  unsigned int periods = 0;
  // Asked from nothing (the first answer, or the tree back on a device before any lag was
  // learnt): the driver's whole buffer, seconds of it perhaps from before the tree. Its newest
  // period alone says how busy the tree is now.
  unsigned int first = 0;
  if (previous == 0) {
    while (first < n && samples_[first].time_stamp + kSamePeriodUs <= samples_[n - 1].time_stamp) ++first;
  }
  for (unsigned int i = first; i < n; ++i) {
    const ProcessSample& x = samples_[i];
    const bool next_period = x.time_stamp >= start + kSamePeriodUs;
    if (periods == 0 || next_period) {
      if (start > 0 && next_period) {
        period = std::min(period == 0 ? kLongestPeriodUs : period, x.time_stamp - start);
      }
      start = x.time_stamp;
      ++periods;
    }
    auto it = std::find_if(held.begin(), held.end(), [&](const Held& h) { return h.pid == x.pid; });
    if (it != held.end()) {
      it->sm_sum += x.sm_util;
    } else {
      held.push_back(Held{x.pid, static_cast<double>(x.sm_util)});
    }
  }
  period_us_[device] = period;
  held_periods_[device] = periods;
  if (n > 0) last_seen_[device] = std::max(last_seen_[device], samples_[n - 1].time_stamp);
}

// No process of the tree on the device: its latest answer no longer holds, and the samples of
// the time till the tree comes back are the other tenants'.
void NvmlUtil::forget(std::size_t device) {
  held_periods_[device] = 0;
  // Without a lag learnt, the driver's clock is not known: the next answer's newest period then
  // stands alone (hold()).
  if (lags_[device].count() > 0) {
    since_[device] = static_cast<unsigned long long>(std::max(0LL, driver_now(device, wall_us())));
  }
}

std::optional<double> NvmlUtil::tree_share(std::size_t device, std::span<const pid_t> pids) {
  if (!process_ || unsupported_[device]) return std::nullopt;
  const long long wall = wall_us();
  // A clock set back (both clocks, on bare metal) makes every new stamp older than the last
  // seen: the driver would answer NOT_FOUND for as long. Start again from nothing.
  if (lags_[device].count() > 0 &&
      driver_now(device, wall) + kHoldUs < static_cast<long long>(last_seen_[device])) {
    restart(device);
  }
  const unsigned long long since = std::max(last_seen_[device], since_[device]);
  // The call costs milliseconds of CPU on a real driver (1.4 to 2.7 ms on an H200) and finds
  // nothing new before the next sample is due: between two, the latest answer stands.
  if (since_[device] == 0 && period_us_[device] > 0 &&
      driver_now(device, wall) < static_cast<long long>(since + period_us_[device])) {
    return held_share(device, pids);
  }
  unsigned int n = static_cast<unsigned int>(samples_.size());
  int rc = process_(handles_[device], samples_.data(), &n, since);
  if (rc == kInsufficientSize && n > samples_.size() && n <= kMaxSamples) {
    samples_.resize(n);  // grows to the driver's buffer once, then stays
    rc = process_(handles_[device], samples_.data(), &n, since);
  }
  if (rc == kNotFound) return held_share(device, pids);  // none since the last seen
  if (rc == kNotSupported) unsupported_[device] = true;
  if (rc != kSuccess) return std::nullopt;
  n = std::min<unsigned int>(n, static_cast<unsigned int>(samples_.size()));
  if (n > 0) {
    hold(device, n, since_[device] == 0 ? since : 0);
    since_[device] = 0;
    answered_ns_[device] = monotonic_ns();
    lags_[device].add(wall - static_cast<long long>(last_seen_[device]));
  }
  return held_share(device, pids);
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
      if (u.tree_listed) {
        u.tree_sm = tree_share(i, pids);
      } else if (process_ && !unsupported_[i]) {
        u.tree_sm = 0.0;
        forget(i);
      } else {
        u.tree_sm.reset();  // the driver cannot say, here or anywhere
      }
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
