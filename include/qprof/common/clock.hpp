// SPDX-License-Identifier: Apache-2.0
// The sampler's clocks: deadlines on CLOCK_MONOTONIC, trace times in Unix seconds anchored once
// to the wall clock, so that a wall-clock step during a run never bends the time axis.
#pragma once

#include <cstdint>

#include "qprof/common/types.hpp"

namespace qprof {

std::int64_t monotonic_ns();
// CPU time of the calling thread, user and system: what a pass of work cost, whatever else the
// machine was doing meanwhile.
std::int64_t thread_cpu_ns();

// Sleeps until the absolute monotonic deadline. Returns false if a signal cut the sleep short.
bool sleep_until_ns(std::int64_t deadline_ns);

class WallAnchor {
 public:
  WallAnchor();  // reads both clocks now
  Seconds unix_at(std::int64_t mono_ns) const { return unix0_ + static_cast<double>(mono_ns - mono0_) * 1e-9; }
  std::int64_t mono0() const { return mono0_; }

 private:
  double unix0_;
  std::int64_t mono0_;
};

// The deadline after `previous` on the grid previous + k·period that lies after `now`: a late
// sample never shifts the schedule; deadlines already past are skipped and added to `missed`.
std::int64_t next_deadline(std::int64_t previous, std::int64_t period, std::int64_t now, std::uint64_t& missed);

}  // namespace qprof
