// SPDX-License-Identifier: Apache-2.0
#include "cpu_rate.hpp"

#include <algorithm>

namespace qprof::record::session {
using trace::CpuSample;

double CpuRate::measure(const CpuSample& from, const CpuSample& to) {
  const double percent = std::max(0.0, 100.0 * (to.cpu_seconds - from.cpu_seconds) / (to.t - from.t));
  peak_ = std::max(peak_.value_or(0.0), percent);
  return percent;
}

std::optional<double> CpuRate::add(Seconds t, double cpu_seconds) {
  const CpuSample cpu{t, cpu_seconds};
  if (!last_) {
    last_ = cpu;
    return std::nullopt;
  }
  if (cpu.t - last_->t < 0.5 * stats_interval_) {
    if (cpu.t > last_->t) pending_ = cpu;
    return std::nullopt;
  }
  latest_ = measure(*last_, cpu);
  before_ = last_;
  last_ = cpu;
  pending_.reset();
  return latest_;
}

void CpuRate::finish() {
  // Without a measured interval the run's one rate is its mean: no peak is made of it.
  if (!pending_ || !before_) return;
  measure(*before_, *pending_);
  last_ = pending_;
  pending_.reset();
}

}  // namespace qprof::record::session
