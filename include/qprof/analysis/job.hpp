// SPDX-License-Identifier: Apache-2.0
// A distributed job's traces (one per rank, from torchrun, mpirun or srun) seen as one: each
// rank's series summed on a common time axis, peaks per host, stages across ranks, clock skew.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "qprof/analysis/metric.hpp"

namespace qprof::trace {
class Writer;
}

namespace qprof::analysis {

// How traces recorded apart are laid on one time axis: by their wall-clock times (the default:
// ranks run at the same time), or each from its own start (hosts whose clocks disagree).
enum class Align { wall, start };

// The job's time axis: seconds from the earliest trace's start (wall), or from each trace's own
// start (start).
struct JobClock {
  std::vector<Seconds> offset;  // per trace: its Unix times minus this are job seconds
  Seconds origin = 0;           // Unix time of job second 0 (wall); 0 with start alignment
};
JobClock job_clock(const std::vector<const trace::Trace*>& traces, Align align);

// Σ over the traces of each one's latest sample, at every time any of them has a sample: a
// trace counts from its first sample to its end (trace_end), and nothing before or after.
// Times are job seconds. Empty when no trace has samples of the metric.
std::vector<trace::MemSample> summed_series(const std::vector<const trace::Trace*>& traces, Metric m, Align align);

struct JobPeak {
  Bytes bytes = 0;
  Seconds t = 0;            // job seconds
  std::vector<Bytes> each;  // every trace's value at that moment (0: not running)
};
// The highest point of summed_series; nullopt without samples. Metrics without samples over
// time (hwm_sum, kernel_process) cannot be summed in time: has_series_over_time says so.
std::optional<JobPeak> job_peak(const std::vector<const trace::Trace*>& traces, Metric m, Align align);
bool has_series_over_time(Metric m);

// Traces grouped by the host in their headers (memory is a per-host limit), hosts in order of
// first appearance; a trace without a host (mprof's) counts under "unknown".
struct HostGroup {
  std::string host;
  std::vector<std::size_t> traces;  // indices into the input
};
std::vector<HostGroup> group_by_host(const std::vector<const trace::Trace*>& traces);

// A stage across ranks: from the earliest rank's start to the latest rank's end; the slowest
// rank is the one whose own run of the stage took longest.
struct JobStage {
  std::string name;
  Seconds start = 0, end = 0;  // job seconds
  std::size_t ranks = 0;       // traces that ran it
  std::size_t slowest = 0;     // index of the slowest trace
  Seconds slowest_duration = 0;
  bool closed = true;  // every rank's run of it ended
};
std::vector<JobStage> job_stages(const std::vector<const trace::Trace*>& traces, Align align);

// Traces of one job (same job id) from hosts whose starts lie more than `tolerance` apart: the
// sentence that says so, else nullopt. Ranks start together, so this is clock skew (or a
// re-launch); --align start lays each trace from its own start instead.
std::optional<std::string> clock_skew_note(const std::vector<const trace::Trace*>& traces, Seconds tolerance = 1.0);

// The job as one trace, for the tables that take traces (qprof compare's job row): RSS, and PSS,
// USS, the cgroup charge and GPU where every rank has them, summed on the job's time axis (Unix
// times from the earliest start with wall alignment); stages across ranks; CPU and I/O totals
// summed. Where every rank has the same footprint basis, its footprint is then the ranks'
// footprints summed, as peak --sum gives it: their
// charges where every rank ran in a cgroup of its own, else their PSS.
trace::Trace job_trace(const std::vector<const trace::Trace*>& traces, Align align);

// Whether write_job_trace sums `traces` as they stream from their files (flat in memory): every
// trace read reduced (trace::read_trace_reduced), none with GPU devices. Else give it traces
// read whole.
bool job_streams(const std::vector<const trace::Trace*>& traces);
// The lines write_trace writes for job_trace(traces, align); where job_streams, without the
// summed series ever in memory.
void write_job_trace(const std::vector<const trace::Trace*>& traces, Align align, trace::Writer& out);

// True when the traces look like one job's ranks: two or more, each with a rank, and the same
// job id where they have one.
bool is_one_job(const std::vector<const trace::Trace*>& traces);

// "rank 3 (host-a)", or the file name when the trace has no rank.
std::string rank_label(const trace::Trace& trace);
// "rank 3 (host-a)"; "rank 3" when the host is empty.
std::string rank_label(std::int64_t rank, const std::string& host);

}  // namespace qprof::analysis
