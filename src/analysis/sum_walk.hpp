// SPDX-License-Identifier: Apache-2.0
// A job's summed series in memory flat in the traces' length: each rank's series read from its
// file (series_scan), by a thread of its own for a few ranks, a piece at a time for many, the K
// streams merged in time order. Private to analysis/.
#pragma once

#include <cstddef>
#include <memory>
#include <utility>
#include <vector>

#include "qprof/analysis/job.hpp"
#include "qprof/analysis/metric.hpp"

namespace qprof::analysis::detail {

// One sample of one rank on the job's time axis; the last of a rank's stream says it ended
// (bytes 0, just after its trace_end).
struct RankEvent {
  Seconds t;
  Bytes bytes;
};

class RankStream;

// The sum over `traces` (all read reduced: their series are in time order) of metric `m`, one
// step per distinct time, in the order and with the values walk_series gives from whole traces:
// events of equal time in trace order, each trace's in file order.
class SumWalk {
 public:
  SumWalk(const std::vector<const trace::Trace*>& traces, Metric m, Align align);
  ~SumWalk();
  SumWalk(const SumWalk&) = delete;
  SumWalk& operator=(const SumWalk&) = delete;

  // The next distinct time and the sum there; false at the end. Rethrows a reader's failure.
  bool next(Seconds& t, Bytes& sum);
  // Every trace's value at the time next() gave.
  const std::vector<Bytes>& each() const { return current_; }

 private:
  bool pop(std::size_t& trace, RankEvent& e);

  std::vector<std::unique_ptr<RankStream>> streams_;
  std::vector<RankEvent> head_;
  // (time, trace) of each stream's head not yet taken, earliest at the front.
  std::vector<std::pair<Seconds, std::size_t>> heap_;
  std::vector<Bytes> current_;
  Bytes sum_ = 0;
};

// job_trace without its summed series (RSS, PSS, GPU): header, CPU and I/O totals, stages.
trace::Trace job_head(const std::vector<const trace::Trace*>& traces, Align align);
// Whether the job's trace has a PSS series: every rank has one.
bool job_sums_pss(const std::vector<const trace::Trace*>& traces);
// Whether the job's trace has a cgroup charge series (CGROUP lines of the ranks' charges summed),
// which is then its footprint as each rank's is: every rank has one.
bool job_sums_cgroup(const std::vector<const trace::Trace*>& traces);
// The job's CGROUP line at a step of its summed charge: the peak so far is the highest sum,
// which `high` keeps from step to step (the ranks' own high-water marks are not of one time).
trace::CgroupSample job_charge(Seconds t, Bytes sum, Bytes& high);

// True when the summed series can be read by SumWalk: every trace read reduced.
bool all_reduced(const std::vector<const trace::Trace*>& traces);

}  // namespace qprof::analysis::detail
