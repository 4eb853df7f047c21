// SPDX-License-Identifier: Apache-2.0
// The records of a Quark-style report (Start, each marker, End) and the run's totals: I/O, CPU,
// the largest cgroup charge (checkpoints.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "qprof/trace/trace.hpp"

namespace qprof::analysis {

struct Checkpoint {
  std::string step;  // "Start", a marker's label, "End"
  Seconds t = 0;
  trace::Snapshot at;
};

// "Start" (the first value of every series, at the first sample), one per marker (the values at
// the marker: its immediate sample), and "End" (the last value of every series, at the last
// sample) unless `with_end` is false (a run still going on).
std::vector<Checkpoint> checkpoints(const trace::Trace& trace, bool with_end = true);

// Totals since the start: the last IO sample; nullopt without IO lines.
std::optional<trace::IoSample> io_totals(const trace::Trace& trace);

// The tree's CPU use from the cumulative CPU lines: nullopt without them.
// The intervals cover the run from its start (CPU time 0 there) to the last reading, so the
// run's mean is never above the peak; a run with no interval of `min_interval` has no peak.
struct CpuUse {
  double seconds = 0;                  // user + system of the whole tree
  std::optional<double> peak_percent;  // of one core, the highest over intervals of at least `min_interval`
};
std::optional<CpuUse> cpu_use(const trace::Trace& trace, Seconds min_interval = 0.05);

// The cgroup sample with the highest charge (usage) among those with memory.stat parts where any
// has them (the charge is read at every sample, its parts with the stats), else of all.
std::optional<trace::CgroupSample> largest_cgroup_sample(const trace::Trace& trace);

}  // namespace qprof::analysis
