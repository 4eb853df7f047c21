// SPDX-License-Identifier: Apache-2.0
// `qprof run`: launch the command, follow its tree on a fixed-deadline schedule, stream the
// trace, tee stderr for markers, forward signals, and report.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "qprof/common/failure.hpp"
#include "qprof/common/speaker.hpp"
#include "qprof/record/options.hpp"
#include "qprof/trace/footprint.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof::record {

// The parts of a run report that a part of the session returns whole when the run ends.

// The PSS side (Sampler's PssSampler), unless --no-pss.
struct PssReport {
  std::optional<trace::PssSample> peak;
  std::optional<Bytes> uss_peak;
  std::optional<Bytes> unreclaimable_peak;  // Pss_Anon + Pss_Shmem, the largest pass
  Seconds interval = 0;                     // as it was adapted to the cost of a pass
  std::uint64_t passes = 0;                 // PSS readings of the tree
  std::uint64_t rise_passes = 0;            // of those, taken early at a new high of Σ RSS
  std::uint64_t rereads = 0;                // readings taken again: the tree's sharing moved during the one before
};

// How the command ended (end_figures' record_exit).
struct ExitReport {
  int status = 0;  // the code, or 128 + signal
  int signal = 0;
  bool timed_out = false;
  // Attached, the process's exit status is known only if qprof saw it as a zombie before its
  // parent reaped it.
  bool status_known = true;
  bool still_running = false;  // attached: qprof stopped (--timeout, a signal) while the process ran on
};

// The tree's own cgroup (end_figures' record_cgroup); oom_kills also counts in qprof's own
// cgroup, which the job shares, where the tree had none.
struct CgroupReport {
  std::optional<Bytes> peak;                // the peak of the cgroup's charge (includes page cache)
  std::optional<Bytes> droppable_cache;     // page cache less shared memory at the highest usage sample
  std::optional<Bytes> unreclaimable_peak;  // anon + shmem of memory.stat, the largest sample
  std::optional<std::uint64_t> oom_kills;   // oom_kill of the tree's cgroup, where the kernel tells
};

// Σ VmHWM (end_figures' record_hwm_sum): the tree's upper bound.
struct HwmReport {
  Bytes sum = 0;              // an upper bound for the tree unless uncovered > 0
  std::size_t uncovered = 0;  // processes whose own peak Σ VmHWM could not cover
  std::size_t capped = 0;     // processes counted with an ancestor's wait4 peak (loose)
  bool useful = false;        // a bound, and within kUsefulBoundRatio of the peak
};

// The memory limit in force (record/limit.hpp; session's MemoryLimitWatch::report) and whether
// the tree crossed 90 % of it.
struct LimitReport {
  std::optional<Bytes> bytes;
  std::string source, detail;
  bool warned = false;
};

// How the sampling schedule went (the session's sampling_report).
struct SamplingReport {
  Seconds asked_interval = 0;
  Seconds mean_interval = 0;         // achieved, over regular samples
  std::uint64_t samples = 0;         // regular samples
  std::uint64_t marker_samples = 0;  // extra samples taken at markers
  std::uint64_t missed_deadlines = 0;
  std::uint64_t stops = 0;      // Ctrl-Z / SIGTSTP: qprof (and the job) stopped, then continued
  Seconds stopped_seconds = 0;  // no samples are taken while stopped
  // Processes of the tree whose /proc files qprof could not open (out of descriptors): the
  // figures miss them, in part or whole.
  std::uint64_t unread_members = 0;
};

// The tree's usage beside its memory (end_figures' usage_report): the KINDS, TASKS, CPU and IO
// lines' figures of the whole run.
struct UsageReport {
  std::optional<trace::MemKindsSample> kinds_at_peak;  // the RSS split (anon/file/shmem) at its largest KINDS sample
  Bytes peak_swap = 0;
  std::optional<trace::TasksSample> most_tasks;  // the TASKS sample with the most threads
  Bytes peak_vsz = 0;
  double cpu_seconds = 0;  // user + system of the whole tree
  // Of one core, over a stats interval; none when the run was too short to measure one.
  std::optional<double> cpu_peak_percent;
  Seconds stats_interval = 0;  // as asked: the schedule of KINDS, TASKS, CPU, IO
  std::uint64_t readings = 0;  // KINDS/TASKS readings of the tree
  trace::IoSample io;          // totals of the whole tree
};

// The GPU side (session's GpuSampling::finish).
struct GpuReport {
  std::string backend;                   // empty: no GPU figures
  std::optional<trace::MemSample> peak;  // the tree's GPU memory, Σ devices
  bool is_device_total = false;          // some of it is a device's total, not per-process
  std::vector<std::string> devices;      // one line each: name, the tree's peak, device peak, capacity
};

// --watch-dir (session's WatchedDirs::finish): per directory its path, first and largest apparent
// size; the walks' schedule and cost.
struct WatchReport {
  struct Dir {
    std::string path;
    Bytes start = 0, peak = 0, last = 0, fs_free_min = 0;
    bool seen = false;
  };
  std::vector<Dir> dirs;
  std::uint64_t walks = 0;
  Seconds mean_interval = 0, asked_interval = 0;
  double cpu_seconds = 0, cpu_share = 0;
  double first_walk_cpu = 0;  // of cpu_seconds: the baseline walk before the command
  std::uint64_t entries = 0;  // entries of the last walk, all directories
};

// What a finished run tells its summary (and, later, its reports).
struct RunReport {
  std::string trace_path;            // "-": stdout
  bool trace_readable_back = false;  // a regular file (not stdout, a pipe or a FIFO)
  // Readable back: a read descriptor of the file written (see read_back), shared by copies.
  std::shared_ptr<const int> trace_read_fd;
  std::string trace_error;  // not empty: a write failed, the trace is incomplete (why)
  std::string command;
  Seconds start = 0;     // Unix time of the start
  Seconds duration = 0;  // start to the end of the tree
  SamplingReport sampling;
  std::optional<trace::MemSample> sampled_peak;  // the tree's RSS
  std::optional<Bytes> kernel_process_peak;      // largest single process (RUSAGE_CHILDREN)
  CgroupReport cgroup;  // the tree's own cgroup (--cgroup), where it had one with a memory controller
  // Why the run was refused before the command started (--mem without a memory cgroup): the
  // CLI says it as its failure.
  std::string refusal;
  double margin = 0.15;                    // the request's (RunOptions::margin)
  std::vector<trace::OomKill> oom_events;  // the tree's processes the OOM killer killed, named where qprof could
  PssReport pss;                           // unless --no-pss
  // The answer: the tree's memory with shared pages counted once (footprint_of_run).
  std::optional<trace::Footprint> footprint;
  HwmReport hwm;  // Σ VmHWM, the upper bound
  UsageReport usage;
  double profiler_cpu_seconds = 0;  // what qprof itself used, all its threads
  GpuReport gpu;
  ExitReport exit;
  bool launched = false;
  bool attached = false;              // qprof attach: the process was not qprof's child
  LimitReport limit;                  // the memory limit in force
  WatchReport watch;                  // --watch-dir
  std::vector<std::string> warnings;  // said during the run, repeated in the trace as NOTE
  std::vector<trace::Stage> stages;   // as recorded: closed ones, then those never ended
};

// The footprint from the run's own figures: its cgroup's charge where the tree had a group of
// its own, else its Σ PSS.
std::optional<trace::Footprint> footprint_of_run(const RunReport& report);

// What qprof knows of a finished run without reading its trace: a Trace of its peaks (each
// metric's peak as its one sample, the kernel's figures as PEAK lines) and its stages. Budgets
// are checked on it when the trace is incomplete or a stream that cannot be read back.
trace::Trace peaks_in_memory(const RunReport& report);

// The trace a finished run wrote, read through the descriptor opened with it (never by path: a
// file moved there meanwhile is not it). A trace that is not a regular file, or that the reader
// finds broken, is a Failure naming the trace and the line.
Result<trace::Trace> read_back(const RunReport& report);

// Ways to follow a run while it goes on.
struct RunHooks {
  // Called on the sampler thread right after a checkpoint was written and flushed, with the
  // values of its immediate sample. Keep it short (hand slow work to another thread): the
  // sampler waits for it.
  // Not called once the trace is incomplete.
  std::function<void(const trace::Marker&)> on_checkpoint;
  // Called once the trace file is open, before the command starts, with its name.
  std::function<void(const std::string&)> on_trace_opened;
  // Called once, at the first failed write of the trace (on the sampler thread).
  std::function<void()> on_trace_failed;
  // What qprof says outside the live line's notices: why the run could not start, the command's
  // killing signal, a trace that cannot be written, -v's notes. Unset: nothing is said.
  Speaker speaker;
};

// Runs the command; returns qprof's exit status (the command's, 126/127 if it could not start,
// 2 for qprof's own errors, as a bad -o). Fills `report` when given: a write that failed is in
// report->trace_error, and the caller decides what status says so. Prints nothing: what it says
// goes through hooks.speaker, and the summary is the caller's to format (runs/run_summary).
int run_profiled(const RunOptions& options, RunReport* report = nullptr, const RunHooks& hooks = {});

}  // namespace qprof::record
