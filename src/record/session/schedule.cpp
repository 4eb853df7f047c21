// SPDX-License-Identifier: Apache-2.0
#include "schedule.hpp"

#include <algorithm>
#include <cmath>

#include "qprof/common/clock.hpp"

namespace qprof::record::session {
namespace {

constexpr std::int64_t kNs = 1000000000;

}  // namespace

Schedule::Schedule(Seconds interval, Seconds stats_interval, std::int64_t start_ns)
    : period_(std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(interval * kNs)))),
      stats_period_(std::max(period_, static_cast<std::int64_t>(std::llround(stats_interval * kNs)))),
      next_sample_(start_ns),
      next_stats_(start_ns) {}

void Schedule::sample_taken(std::int64_t now) { next_sample_ = next_deadline(next_sample_, period_, now, missed_); }

void Schedule::stats_taken(std::int64_t now) {
  std::uint64_t skipped = 0;  // the report counts the regular schedule's misses only
  next_stats_ = next_deadline(next_stats_, stats_period_, now, skipped);
}

std::int64_t Schedule::next() const { return std::min(next_sample_, next_stats_); }

void SampleSpan::taken(Seconds t) {
  if (count_ == 0) first_ = t;
  last_ = t;
  ++count_;
}

Seconds SampleSpan::mean_interval(Seconds stopped) const {
  if (count_ < 2) return 0;
  return std::max(0.0, last_ - first_ - stopped) / static_cast<double>(count_ - 1);
}

}  // namespace qprof::record::session
