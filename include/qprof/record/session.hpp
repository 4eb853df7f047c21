// `qprof run`: launch the command, follow its tree on a fixed-deadline schedule, stream the
// trace, tee stderr for markers, forward signals, and report.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "qprof/record/options.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof {

// What a finished run tells its summary (and, later, its reports).
struct RunReport {
  std::string trace_path;
  std::string command;
  Seconds start = 0;                // Unix time of the start
  Seconds duration = 0;             // start to the end of the tree
  std::uint64_t samples = 0;        // regular samples
  std::uint64_t marker_samples = 0; // extra samples taken at markers
  std::uint64_t missed_deadlines = 0;
  Seconds asked_interval = 0;
  Seconds mean_interval = 0;        // achieved, over regular samples
  std::optional<MemSample> sampled_peak;  // the tree's RSS
  std::optional<Bytes> kernel_process_peak;  // largest single process (RUSAGE_CHILDREN)
  std::optional<Bytes> cgroup_peak;
  std::optional<PssSample> pss_peak;         // with --metric pss|uss|all
  std::optional<Bytes> uss_peak;
  Seconds pss_interval = 0;                  // as it was adapted to the cost of a pass
  Bytes hwm_sum = 0;                         // Σ VmHWM: an upper bound for the tree
  double cpu_seconds = 0;                    // user + system of the whole tree
  double cpu_peak_percent = 0;               // of one core, over a stats interval
  IoSample io;                               // totals of the whole tree
  double profiler_cpu_seconds = 0;           // what qprof itself used, all its threads
  std::string gpu_backend;                   // empty: no GPU figures
  std::optional<MemSample> gpu_peak;         // the tree's GPU memory, Σ devices
  bool gpu_is_device_total = false;          // some of it is a device's total, not per-process
  std::vector<std::string> gpu_devices;      // one line each: name, the tree's peak, device peak, capacity
  int exit_status = 0;
  int signal = 0;
  bool timed_out = false;
  bool launched = false;
  std::vector<std::string> warnings;  // said during the run, repeated in the trace as NOTE
};

// Ways to follow a run while it goes on.
struct RunHooks {
  // Called on the sampler thread right after a checkpoint was written and flushed, with the
  // values of its immediate sample. Keep it short (hand slow work to another thread): the
  // sampler waits for it.
  std::function<void(const Marker&)> on_checkpoint;
};

// Runs the command; returns qprof's exit status (the command's, 126/127 if it could not start,
// 2 for qprof's own errors). Fills `report` when given.
int run_profiled(const RunOptions& options, RunReport* report = nullptr, const RunHooks& hooks = {});

// The default trace name for a run starting now: qprof_YYYYMMDDhhmmss.dat.
std::string default_trace_name();

}  // namespace qprof
