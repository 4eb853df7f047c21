// SPDX-License-Identifier: Apache-2.0
// The run's two fixed-deadline schedules: a regular sample every --interval, and the stats pass
// every --stats-interval, never more often than the samples. A deadline missed is skipped, not
// caught up; the regular schedule's are counted.
#pragma once

#include <cstdint>

#include "qprof/common/types.hpp"

namespace qprof::record::session {

class Schedule {
 public:
  Schedule(Seconds interval, Seconds stats_interval, std::int64_t start_ns);

  bool sample_due(std::int64_t now) const { return now >= next_sample_; }
  // The sample due was taken; `now` is the time after it.
  void sample_taken(std::int64_t now);
  bool stats_due(std::int64_t now) const { return now >= next_stats_; }
  void stats_taken(std::int64_t now);
  // Continued after a stop: both schedules start again from `now`, the time stopped missed nothing.
  void restart(std::int64_t now) { next_sample_ = next_stats_ = now; }
  // The next deadline of either schedule.
  std::int64_t next() const;
  std::uint64_t missed() const { return missed_; }  // regular deadlines skipped

 private:
  std::int64_t period_;
  std::int64_t stats_period_;
  std::int64_t next_sample_;
  std::int64_t next_stats_;
  std::uint64_t missed_ = 0;
};

// The regular samples taken (the tree was not empty) and their achieved mean interval.
class SampleSpan {
 public:
  void taken(Seconds t);
  std::uint64_t count() const { return count_; }
  // Over the samples' span, less the time stopped by job control (no samples, not the schedule's).
  Seconds mean_interval(Seconds stopped) const;

 private:
  std::uint64_t count_ = 0;
  Seconds first_ = 0;
  Seconds last_ = 0;
};

}  // namespace qprof::record::session
