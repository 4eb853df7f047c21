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
  // Set where the peak is a rank's own kernel high-water mark (its cgroup's), which came between
  // its samples, plus the least the other ranks held while it ran: a floor, with no moment (`t`
  // and `each` are those of the step where the others held least, `each` with the mark).
  std::optional<std::size_t> kernel_rank;
};
// The highest point of summed_series, or where higher, the floor a rank's own kernel high-water
// mark sets (JobPeak::kernel_rank): the job never holds less than one of its ranks. nullopt
// without samples. Metrics without samples over time (hwm_sum, kernel_process) cannot be summed
// in time: has_series_over_time says so.
std::optional<JobPeak> job_peak(const std::vector<const trace::Trace*>& traces, Metric m, Align align);
bool has_series_over_time(Metric m);
// The metric a job sums for `m`: the footprint like for like, the ranks' charges where every rank
// ran in a cgroup of its own, else their Σ PSS where every rank has it (job_trace's rule); any
// other metric as it is.
Metric job_footprint_metric(const std::vector<const trace::Trace*>& traces, Metric m);
// Where the ranks' footprints are of two kinds (a cgroup's charge in some, Σ PSS in others), the
// sentence that says which and what the job's footprint is then; else nullopt.
std::optional<std::string> mixed_footprint_note(const std::vector<const trace::Trace*>& traces);

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

// A rank given twice (the same job id, host and rank, as a file named twice, a copy, or two
// overlapping globs give it): the sentence that names it, else nullopt. Its share would count twice.
std::optional<std::string> repeated_rank(const std::vector<const trace::Trace*>& traces);
// Traces of more than one job id: the sentence that says so ("traces of 2 jobs (ids 5, 7)"), else
// nullopt. Summed, they are one job only if they ran at the same time on the same hosts.
std::optional<std::string> several_jobs_note(const std::vector<const trace::Trace*>& traces);
// The world size against the traces given: "the world size is 3 but 2 traces were given: the sum
// misses ranks" (or more than the ranks: another job's, or a run's twice), else nullopt.
std::optional<std::string> world_size_note(const std::vector<const trace::Trace*>& traces);

// "rank 1 (vm)'s own peak (316.2 MiB, its cgroup's high-water mark) came between its samples: …":
// why a job's peak (JobPeak::kernel_rank) is a floor with no moment.
std::string kernel_floor_note(const trace::Trace& rank, Bytes mark);

// True when the traces look like one job's ranks: two or more, each with a rank, and the same
// job id where they have one.
bool is_one_job(const std::vector<const trace::Trace*>& traces);

// "rank 3 (host-a)", or the file name when the trace has no rank.
std::string rank_label(const trace::Trace& trace);
// "rank 3 (host-a)"; "rank 3" when the host is empty.
std::string rank_label(std::int64_t rank, const std::string& host);
// What names a trace shown beside others (plot, export): its --label, else a rank's trace's
// rank_label, else "" (common/trace_label then names it by its file).
std::string given_or_rank_label(const std::string& label, std::optional<std::int64_t> rank, const std::string& host);

}  // namespace qprof::analysis
