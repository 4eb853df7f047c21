// SPDX-License-Identifier: Apache-2.0
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
constexpr int kNotSupported = 3;
constexpr int kNoPermission = 4;
constexpr int kNotFound = 6;
constexpr int kPcieTxBytes = 0;     // NVML_PCIE_UTIL_TX_BYTES
constexpr int kPcieRxBytes = 1;     // NVML_PCIE_UTIL_RX_BYTES
constexpr double kPcieUnit = 1024;  // NVML reports KB/s
constexpr unsigned kMaxSamples = 1u << 16;
// What an H200's driver (580.159) answers (bench/nvml_probe.py, bench/nvml_answers.py): it samples the GPU once per
// sample period (1/6 s to 1 s by product, NVML's documentation; 200 ms there) and credits the period to the process
// that held the GPU then (with one process, that process even when idle). Asked for what is newer than a time, it
// answers one figure per process sampled since: its SM % summed over the window's periods and divided by their number,
// stamped with its newest sample. So the tree's share over the window is the sum of its processes' figures, and a call
// made late loses nothing but time resolution. The latest answer stands until the next one, for as long as a sample
// period can last and a half (timed on the monotonic clock: wall clocks step).
constexpr long long kLongestPeriodUs = 1'000'000;
constexpr long long kShortestPeriodUs = 166'667;
constexpr long long kHoldUs = kLongestPeriodUs * 3 / 2;
constexpr std::int64_t kHoldNs = kHoldUs * 1000;
// A first window holds at least one sample, whatever the product's period.
constexpr long long kFirstWindowUs = kLongestPeriodUs;

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
  dev_.assign(handles_.size(), DeviceState{});
  samples_.resize(64);
}

// The driver's clock now, as near as can be told. Its stamps are in µs of wall-clock time, but
// not necessarily of ours. An answer's newest sample is never newer than the driver's clock, so
// our clock less the least lag between an answer and its newest sample is never ahead of the
// driver's: a call is made at most that lag late. The least of the latest eight answers only, so
// that a clock set or drifting apart is followed.
long long NvmlUtil::driver_now(std::size_t device, long long wall) const {
  const LeastOfLatest<long long>& lags = dev_[device].lags;
  return lags.count() == 0 ? wall : wall - lags.least();
}

void NvmlUtil::restart(std::size_t device) {
  DeviceState& d = dev_[device];
  d.last_seen = 0;
  d.from = 0;
  d.period_us = 0;
  d.asked_wall_us = 0;
  d.lags = {};
}

double NvmlUtil::held_share(std::size_t device, std::span<const pid_t> pids) const {
  const DeviceState& d = dev_[device];
  if (!d.holding || monotonic_ns() - d.answered_ns > kHoldNs) return 0;
  unsigned int sum = 0;
  for (const Held& h : d.held) {
    if (has_pid(pids, static_cast<pid_t>(h.pid))) sum += h.busy;
  }
  return std::min(sum, 100u);  // each figure is rounded up by the driver
}

// Samples [0, n) of samples_ become the latest answer of `device`. One figure per process is
// what a driver answers; should one answer a process twice, its newest figure is taken.
void NvmlUtil::hold(std::size_t device, unsigned int n) {
  std::sort(samples_.begin(), samples_.begin() + n,
            [](const ProcessSample& a, const ProcessSample& b) { return a.time_stamp < b.time_stamp; });
  DeviceState& d = dev_[device];
  std::vector<Held>& held = d.held;
  held.clear();  // capacity kept: grows to the most processes of an answer, then stays
  for (unsigned int i = 0; i < n; ++i) {
    const ProcessSample& x = samples_[i];
    auto it = std::find_if(held.begin(), held.end(), [&](const Held& h) { return h.pid == x.pid; });
    if (it == held.end()) {
      held.push_back(Held{x.pid, x.sm_util});
    } else {
      it->busy = x.sm_util;  // newer
    }
  }
  d.holding = true;
  d.last_seen = samples_[n - 1].time_stamp;
  d.answered_ns = monotonic_ns();
}

// The driver's sample period, learnt from the gap between two answers' newest samples, taken
// only when no other sample can lie between them: the call before this answer found nothing
// newer than `previous` (or was its answer), and was made less than half the shortest period
// before `newest`, so `newest` is the sample that followed `previous`. A gap of several periods
// is never taken: calls spaced by too long a period would see gaps of it and confirm it.
void NvmlUtil::learn_period(std::size_t device, unsigned long long previous, unsigned long long newest) {
  DeviceState& d = dev_[device];
  if (d.asked_wall_us == 0 || newest <= previous) return;
  // The lags known now make this never later than the driver's clock was at that call.
  const long long asked = driver_now(device, d.asked_wall_us);
  if (static_cast<long long>(newest) - asked > kShortestPeriodUs / 2) return;
  const unsigned long long gap = newest - previous;
  d.period_us = d.period_us == 0 ? gap : std::min(d.period_us, gap);
}

// No process of the tree on the device: its latest answer no longer holds, and the samples of
// the time till the tree comes back are the other tenants'. The next answer's window starts at
// the tree's return.
void NvmlUtil::forget(std::size_t device) {
  DeviceState& d = dev_[device];
  d.holding = false;
  d.last_seen = 0;
  d.from = static_cast<unsigned long long>(std::max(1LL, driver_now(device, wall_us())));
}

// Every process on the device is the tree's: its share is the device's busy %, and the latest
// answer no longer holds. Should another tenant come, the next answer's window starts as a
// first one does, a second back: the tree's samples of that second are its own.
void NvmlUtil::alone(std::size_t device) {
  DeviceState& d = dev_[device];
  d.holding = false;
  d.last_seen = 0;
  d.from = 0;
}

std::optional<double> NvmlUtil::tree_share(std::size_t device, std::span<const pid_t> pids) {
  DeviceState& d = dev_[device];
  if (!process_ || d.unsupported) return std::nullopt;
  const long long wall = wall_us();
  // A clock set back (both clocks, on bare metal) makes every new stamp older than the last
  // seen: the driver would answer NOT_FOUND for as long. Start again from nothing.
  if (d.last_seen > 0 && d.lags.count() > 0 &&
      driver_now(device, wall) + kHoldUs < static_cast<long long>(d.last_seen)) {
    restart(device);
  }
  // Asked from 0 the driver answers its whole buffer, seconds of it from before the job and,
  // on an H200, stamped seconds back (bench/nvml_answers.py): a first window starts a second ago
  // (or where the tree came to the device), and stays there until the driver answers, should
  // its clock be behind ours.
  if (d.last_seen == 0 && d.from == 0) {
    d.from = static_cast<unsigned long long>(std::max(1LL, driver_now(device, wall) - kFirstWindowUs));
  }
  const unsigned long long since = d.last_seen > 0 ? d.last_seen : d.from;
  // The call costs milliseconds of CPU on a real driver (1.4 to 2.7 ms on an H200) and finds
  // nothing new before the next sample is due: between two, the latest answer stands.
  if (d.last_seen > 0 && d.period_us > 0 && driver_now(device, wall) < static_cast<long long>(since + d.period_us)) {
    return held_share(device, pids);
  }
  unsigned int n = static_cast<unsigned int>(samples_.size());
  int rc = process_(handles_[device], samples_.data(), &n, since);
  if (rc == kInsufficientSize && n > samples_.size() && n <= kMaxSamples) {
    samples_.resize(n);  // grows to the most processes a driver answers at once, then stays
    rc = process_(handles_[device], samples_.data(), &n, since);
  }
  d.probed = true;
  // Refused, the share stays so (a product without it, a container without the right).
  if (rc == kNotSupported || rc == kNoPermission) d.unsupported = true;
  if (rc == kNotFound || (rc == kSuccess && n == 0)) {  // none since
    d.asked_wall_us = wall;
    return held_share(device, pids);
  }
  if (rc != kSuccess) return std::nullopt;
  n = std::min<unsigned int>(n, static_cast<unsigned int>(samples_.size()));
  const unsigned long long previous = d.last_seen;
  hold(device, n);
  d.from = 0;
  d.lags.add(wall - static_cast<long long>(d.last_seen));
  if (previous > 0) learn_period(device, previous, d.last_seen);
  d.asked_wall_us = wall;
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
      u.busy = std::min(r.gpu, 100u);
      u.mem_bw = std::min(r.memory, 100u);
      using Tenancy = DeviceUtil::Tenancy;
      DeviceState& d = dev_[i];
      const bool known_without_call = u.tenancy == Tenancy::absent || u.tenancy == Tenancy::alone;
      // Where the share is known without the call (0, or the device's busy %), the call is
      // made once all the same, to learn whether the driver gives the share at all: a series
      // then never holds figures on one stretch where the driver would refuse them on another.
      if (known_without_call && !d.probed) tree_share(i, pids);  // nothing when the driver cannot
      if (!process_ || d.unsupported) {
        u.tree_busy.reset();  // the driver cannot say, here or anywhere
      } else if (u.tenancy == Tenancy::absent) {
        u.tree_busy = 0.0;
        forget(i);
      } else if (u.tenancy == Tenancy::alone) {
        u.tree_busy = u.busy;
        alone(i);
      } else {
        u.tree_busy = tree_share(i, pids);
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
