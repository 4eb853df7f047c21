// SPDX-License-Identifier: Apache-2.0
// fit --gpu's search: the checks, the MPS daemon, the baseline and the bisection (LimitSearch,
// as host fit's), each probe a gpu_probe.
#include "qprof/fit/gpu_fit.hpp"

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>

#include "gpu_probe.hpp"
#include "qprof/common/units.hpp"
#include "qprof/fit/mps_daemon.hpp"
#include "qprof/record/launcher.hpp"

namespace qprof::fit {
namespace {

using Clock = std::chrono::steady_clock;
constexpr Bytes kMiB = Bytes{1} << 20;

// Variables set (or removed: nullopt) for the fit's lifetime, the user's values back after it.
class ScopedEnvironment {
 public:
  void set(const std::string& name, const std::optional<std::string>& value) {
    if (!saved_.count(name)) {
      const char* old = ::getenv(name.c_str());
      saved_[name] = old ? std::optional<std::string>(old) : std::nullopt;
    }
    if (value) {
      ::setenv(name.c_str(), value->c_str(), 1);
    } else {
      ::unsetenv(name.c_str());
    }
  }
  ~ScopedEnvironment() {
    for (const auto& [name, value] : saved_) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

// A directory for the probes' traces and stderr, removed with the object.
struct WorkDir {
  std::string path;
  WorkDir() {
    std::error_code ec;
    std::string pattern = (std::filesystem::temp_directory_path(ec) / "qprof-gpufit.XXXXXX").string();
    if (::mkdtemp(pattern.data()) != nullptr) path = pattern;
  }
  ~WorkDir() {
    std::error_code ec;
    if (!path.empty()) std::filesystem::remove_all(path, ec);
  }
};

std::vector<std::string> other_pipe_dirs() {
  std::vector<std::string> dirs{kDefaultMpsPipeDir};
  if (const char* own = ::getenv("CUDA_MPS_PIPE_DIRECTORY"); own && *own && dirs.front() != own) dirs.emplace_back(own);
  return dirs;
}

void refuse(FitReport& r, FitEnd end, const std::string& message) {
  r.end = end;
  r.status = 2;
  r.message = message;
}

struct Search {
  const FitOptions& o;
  const std::function<void(const Progress&)>& progress;
  FitReport& r;
  const GpuTarget& target;
  const StopSignals& signals;
  std::string work_dir;
  Clock::time_point start = Clock::now();
  int number = 0;

  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start).count(); }

  // One probe in a fresh group; nullopt (with r's end said) when the search must stop.
  std::optional<GpuProbeResult> probe(std::optional<Bytes> limit, std::optional<double> deadline) {
    Result<std::unique_ptr<ProbeGroup>> group = ProbeGroup::create();
    if (!group) {
      refuse(r, FitEnd::no_cgroup, no_cgroup_message(group.failure().message));
      return std::nullopt;
    }
    GpuProbeResult p =
        run_gpu_probe({o.command, target.uuid, target.backend, limit, work_dir, number++, deadline}, **group, signals);
    group->reset();  // its processes killed, the group removed
    r.probes_s += p.run.seconds;
    if (p.run.launch_failure) {
      r.end = FitEnd::cannot_start;
      r.status = p.run.launch_failure->status;
      r.message = p.run.launch_failure->message;
      return std::nullopt;
    }
    if (p.run.stopped_by_signal) {
      r.end = FitEnd::interrupted;
      r.status = 128 + p.run.stopped_by_signal;
      r.message = "stopped by " + record::signal_name(p.run.stopped_by_signal) +
                  (r.baseline ? " before the search ended: the findings rest on the runs so far"
                              : " during the unlimited run: nothing was found yet");
      return std::nullopt;
    }
    if (!p.trace_problem.empty()) r.notes.push_back("a probe's trace could not be read: " + p.trace_problem);
    return p;
  }

  bool baseline() {
    if (progress) progress({1, 0, 0, elapsed()});
    const auto first = probe(std::nullopt, std::nullopt);
    if (!first) return false;
    if (first->probe.outcome != Outcome::completed) {
      r.end = FitEnd::job_failed;
      r.status = first->probe.exit_status ? first->probe.exit_status : 1;
      r.message = "the command failed in the unlimited run (" + first->probe.detail +
                  "), so there is no limit to fit; qprof fit exits with its status";
      return false;
    }
    if (!first->probe.gpu_peak || *first->probe.gpu_peak == 0 || !first->floor) {
      refuse(r, FitEnd::no_gpu_memory,
             "the command held no memory on GPU " + std::to_string(target.index) +
                 " in the unlimited run (as the GPU sampler saw it): there is no device limit to fit");
      return false;
    }
    Baseline b;
    b.run = first->probe;
    b.charge_peak = *first->probe.gpu_peak;
    b.unreclaimable_peak = std::min(*first->floor, b.charge_peak);
    r.gpu->floor = b.unreclaimable_peak;
    r.baseline = b;
    r.cutoff_s = std::max(o.max_slowdown * b.run.seconds, o.min_cutoff_s);
    return true;
  }

  void bisect() {
    LimitSearch search(*r.baseline, o.resolution, o.full_speed_margin);
    int runs = 1;
    while (signals.stop_signal() == 0) {
      auto next = search.next();
      if (!next) break;
      // MPS takes whole MiB; a limit already tried ends the search (a resolution finer than 1 MiB),
      // unless the search asks for it again: a disagreement run once more.
      const Bytes limit = *next / kMiB * kMiB;
      const bool again = search.repeat() == *next;
      if (!again && std::any_of(r.probes.begin(), r.probes.end(), [&](const Probe& p) { return p.limit == limit; }))
        break;
      if (runs_max_reached(runs, o, r)) break;
      ++runs;
      if (progress) progress({runs, std::min(o.runs_max, runs + search.remaining_estimate() - 1), limit, elapsed()});
      const auto p = probe(limit, r.cutoff_s);
      if (!p) break;
      search.add(p->probe);
      r.probes.push_back(p->probe);
    }
    if (signals.stop_signal() != 0 && r.end == FitEnd::searched) {
      r.end = FitEnd::interrupted;
      r.status = 128 + signals.stop_signal();
      r.message = "stopped by " + record::signal_name(signals.stop_signal()) +
                  " before the search ended: the findings rest on the runs so far";
    }
    r.findings = search.findings();
    r.reference_s = search.reference_seconds();
  }
};

}  // namespace

void search_gpu_limits(const FitOptions& o, const std::function<void(const Progress&)>& progress, FitReport& r) {
  r.command = record::display_command(o.command);
  r.max_slowdown = o.max_slowdown;
  r.full_speed_margin = o.full_speed_margin;
  r.resolution = o.resolution;
  r.swap_limited = false;
  const int index = o.gpu.value_or(0);
  const Result<GpuTarget> target = check_gpu_target(index, {}, other_pipe_dirs());
  if (!target) return refuse(r, FitEnd::gpu_refused, target.failure().message);
  r.gpu = GpuFit{index, target->uuid, target->name, target->total, target->backend, 0, "", dmem_note(detect_dmem())};
  r.gpu->method = "CUDA MPS: CUDA_MPS_PINNED_DEVICE_MEM_LIMIT bounds each process's device memory on GPU " +
                  std::to_string(index) + " (the context included); host memory is not limited";
  StopSignals signals;  // before the daemon: a signal from here on ends the search, and the daemon with it
  if (signals.error() != 0) {
    return refuse(r, FitEnd::probe_error, std::string("cannot watch for signals: ") + std::strerror(signals.error()));
  }
  WorkDir work;
  if (work.path.empty()) return refuse(r, FitEnd::probe_error, "cannot make a directory for the probes' traces");
  auto daemon = MpsDaemon::start(target->control, target->uuid);
  if (!daemon) return refuse(r, FitEnd::gpu_refused, daemon.failure().message);
  {
    ScopedEnvironment env;
    for (const auto& [name, value] : (*daemon)->client_environment()) env.set(name, value);
    // The daemon's server sees this GPU only, as the clients' device 0: a client that names
    // devices itself would name ones the server does not have.
    env.set("CUDA_VISIBLE_DEVICES", std::nullopt);
    Search s{o, progress, r, *target, signals, work.path};
    if (s.baseline()) s.bisect();
  }
  if (const Result<void> stopped = (*daemon)->stop(); !stopped)
    r.notes.push_back("the MPS daemon: " + stopped.failure().message);
}

}  // namespace qprof::fit
