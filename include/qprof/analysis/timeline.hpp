// SPDX-License-Identifier: Apache-2.0
// Where a run is in time: its end, windows with the slack of the trace's rounding, and the
// stages at a moment or of a name (timeline.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "qprof/trace/trace.hpp"

namespace qprof::analysis {

// MEM lines carry 4 decimals of time and MARK lines 6, so the sample taken at a marker can read up
// to 50 µs off the marker's time; windows are widened by this much to keep it inside.
inline constexpr Seconds kTimeSlack = 1e-4;

// The end of the run: the latest of its EXIT time, its last sample, marker and stage end.
Seconds trace_end(const trace::Trace& trace);
// trace_end − t0.
Seconds trace_duration(const trace::Trace& trace);
// Seconds since the trace's start, never negative.
Seconds relative_time(const trace::Trace& trace, Seconds t);

struct TimeWindow {
  Seconds from = 0;
  Seconds to = 0;
  bool contains(Seconds t) const { return t >= from - kTimeSlack && t <= to + kTimeSlack; }
};

// The stages whose window holds t, innermost (latest start) first.
std::vector<const trace::Stage*> stages_at(const trace::Trace& trace, Seconds t);
// Every stage called `name` (a stage can run several times).
std::vector<const trace::Stage*> stages_named(const trace::Trace& trace, std::string_view name);
// Distinct stage names in order of first start.
std::vector<std::string> stage_names(const trace::Trace& trace);

}  // namespace qprof::analysis
