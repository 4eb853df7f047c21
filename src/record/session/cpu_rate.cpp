// SPDX-License-Identifier: Apache-2.0
#include "cpu_rate.hpp"

#include <algorithm>

namespace qprof::session_detail {

std::optional<double> CpuRate::add(Seconds t, double cpu_seconds) {
  const CpuSample cpu{t, cpu_seconds};
  if (!last_) {
    last_ = cpu;
    return std::nullopt;
  }
  if (cpu.t - last_->t < 0.5 * stats_interval_) return std::nullopt;
  const double percent = 100.0 * (cpu.cpu_seconds - last_->cpu_seconds) / (cpu.t - last_->t);
  peak_ = std::max(peak_, percent);
  latest_ = percent;
  last_ = cpu;
  return percent;
}

}  // namespace qprof::session_detail
