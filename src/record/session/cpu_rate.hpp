// SPDX-License-Identifier: Apache-2.0
// The tree's CPU use in percent of one core over each stats interval, and its peak. An interval
// shorter than half the asked one (a marker's pass just after a scheduled one) is not measured:
// the tick granularity of CPU time would swamp it.
#pragma once

#include <optional>

#include "qprof/trace/trace.hpp"

namespace qprof::session_detail {

class CpuRate {
 public:
  explicit CpuRate(Seconds stats_interval) : stats_interval_(stats_interval) {}

  // The tree's total CPU time at `t`; returns the rate over the interval it ends, if measured.
  std::optional<double> add(Seconds t, double cpu_seconds);
  std::optional<double> latest() const { return latest_; }
  double peak() const { return peak_; }

 private:
  Seconds stats_interval_;
  std::optional<CpuSample> last_;
  std::optional<double> latest_;
  double peak_ = 0;
};

}  // namespace qprof::session_detail
