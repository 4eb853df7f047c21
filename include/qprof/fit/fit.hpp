// SPDX-License-Identifier: Apache-2.0
// qprof fit -- CMD: the smallest memory the job runs in. The command runs once unlimited (the
// baseline), then again and again in a fresh memory cgroup with a limit and no swap, while
// LimitSearch bisects the limits at which it stops being OOM-killed, completes within the
// slowdown, and runs at full speed.
#pragma once

#include "qprof/common/request.hpp"
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "qprof/fit/search.hpp"

namespace qprof::fit {

struct FitOptions {
  std::vector<std::string> command;
  double max_slowdown = 4;    // a probe longer than this × the baseline is stopped
  double min_cutoff_s = 0.1;  // …but never before this: a start-up's noise is not a slowdown
  Resolution resolution;
  int runs_max = 16;  // runs in all, the baseline included
  double full_speed_margin = 0.10;
  double sample_every_s = 0.01;  // the baseline's memory.stat sampling (the unreclaimable peak)
  // --gpu[=INDEX]: the device memory of NVIDIA GPU INDEX is searched (gpu_fit.hpp), not host memory.
  std::optional<int> gpu;
  bool cold = false;  // evict the files the job reads from the page cache before each run
};

// Before each run: which, of about how many, at which limit (0: the baseline), and when.
struct Progress {
  int run = 0;    // 1 = the baseline
  int about = 0;  // runs in all, as far as can be told now
  Bytes limit = 0;
  double elapsed_s = 0;  // since fit started
};

enum class FitEnd {
  searched,       // every boundary to the resolution
  runs_max,       // --runs-max stopped it first
  interrupted,    // SIGINT or SIGTERM
  job_failed,     // the baseline failed: nothing to fit
  cannot_start,   // the command cannot be started (126, 127)
  no_cgroup,      // qprof may not create memory cgroups here
  probe_error,    // a limit could not be written
  gpu_refused,    // fit --gpu cannot run here: no NVIDIA GPU, its modes, another MPS daemon, no control program
  no_gpu_memory,  // fit --gpu: the unlimited run held no memory on the device
};

// What fit --gpu searched on and how (gpu_fit.hpp fills it).
struct GpuFit {
  int index = 0;  // NVML's index
  std::string uuid, name;
  Bytes total = 0;
  std::string backend;  // the GPU sampler's: "nvml", "smi"
  Bytes floor = 0;      // the smallest reading of the tree on the device in the unlimited run (a context)
  std::string method;   // which memory the limit bounds, in words
  std::string dmem;     // whether cgroup v2 dmem is here, and what it would bound
};

// The files the job held open or mapped for data in its unlimited run (fit/input_files.hpp).
struct InputReport {
  std::size_t files = 0;
  Bytes size = 0;
  // In page cache after the unlimited run's group was evicted: charged to another cgroup, so the
  // job read it without being charged for it, under any limit.
  Bytes cached_outside = 0;
  bool cold = false;              // --cold: evicted before each run
  bool baseline_again = false;    // --cold found them cached: the unlimited run was made again
  Bytes left_after_eviction = 0;  // --cold: the most that stayed cached after an eviction
  std::size_t not_evicted = 0;    // --cold: files that could not be opened again to evict
};

struct FitReport {
  std::string command;  // as a shell would need it typed
  std::string cgroup;   // "v1" or "v2"
  bool swap_limited = true;
  std::optional<Baseline> baseline;
  std::vector<Probe> probes;         // the limited runs, in the order they ran
  std::optional<InputReport> input;  // host fit's (files 0 where none was seen); nullopt in fit --gpu
  Findings findings;
  double cutoff_s = 0;      // where a probe is stopped as too slow
  double reference_s = 0;   // the fastest completed run: full speed is within the margin of it
  double max_slowdown = 0;  // the options the search ran with
  double full_speed_margin = 0;
  Resolution resolution;
  double qprof_cpu_s = 0;     // qprof's own CPU time over all runs
  double eviction_cpu_s = 0;  // of it, the kernel's reclaim of the groups' page cache
  double probes_s = 0;        // the runs' durations summed
  FitEnd end = FitEnd::searched;
  int status = 0;       // qprof's exit status
  std::string message;  // why it stopped early, in one sentence
  std::vector<std::string> notes;
  std::optional<GpuFit> gpu;               // fit --gpu only
  double request_margin = kDefaultMargin;  // --margin: the requests' margin over the limits found
};

// The request to paste for fit's full-speed limit and for the smallest limit it runs in (each
// nullopt where the search did not find it).
struct FitRequests {
  std::optional<MemoryRequest> full_speed;
  std::optional<MemoryRequest> smallest;
};
FitRequests fit_requests(const FitReport& r);

// True, with the report ended and said, once `runs` runs used up --runs-max: the one stop of host
// and GPU searches alike.
bool runs_max_reached(int runs, const FitOptions& options, FitReport& report);

FitReport run_fit(const FitOptions& options, const std::function<void(const Progress&)>& progress = {});

// What qprof fit needs where it may not create cgroups, and the kernel's reason.
std::string no_cgroup_message(const std::string& why_not);

}  // namespace qprof::fit
