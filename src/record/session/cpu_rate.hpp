// SPDX-License-Identifier: Apache-2.0
// The tree's CPU use in percent of one core over each stats interval, and its peak. An interval
// shorter than half the asked one (a marker's pass just after a scheduled one) is not measured:
// the tick granularity of CPU time would swamp it; its time joins the next interval. The
// measured intervals cover the run from its start (CPU time 0) to the last reading, so the mean
// of the run can never exceed the peak.
#pragma once

#include <optional>

#include "qprof/trace/trace.hpp"

namespace qprof::record::session {

class CpuRate {
 public:
  explicit CpuRate(Seconds stats_interval) : stats_interval_(stats_interval) {}

  // The tree's total CPU time at `t`; returns the rate over the interval it ends, if measured.
  std::optional<double> add(Seconds t, double cpu_seconds);
  // At the end: readings since the last measured interval (too short to be one) join it.
  void finish();
  std::optional<double> latest() const { return latest_; }
  // None when no interval was measured (a run shorter than half a stats interval): its one
  // rate would be its mean.
  std::optional<double> peak() const { return peak_; }

 private:
  double measure(const trace::CpuSample& from, const trace::CpuSample& to);

  Seconds stats_interval_;
  std::optional<trace::CpuSample> last_;     // the end of the last measured interval (or the first reading)
  std::optional<trace::CpuSample> before_;   // the start of the last measured interval
  std::optional<trace::CpuSample> pending_;  // a later reading, too close to last_ to measure
  std::optional<double> latest_;
  std::optional<double> peak_;
};

}  // namespace qprof::record::session
