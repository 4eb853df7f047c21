// SPDX-License-Identifier: Apache-2.0
#include "qprof/fit/fit.hpp"

#include <signal.h>
#include <time.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>

#include "qprof/common/units.hpp"
#include "qprof/fit/gpu_fit.hpp"
#include "qprof/fit/input_files.hpp"
#include "qprof/fit/probe_group.hpp"
#include "qprof/fit/probe_runner.hpp"
#include "qprof/fit/stop_signals.hpp"
#include "qprof/record/launcher.hpp"

namespace qprof::fit {
using record::describe_wait_status;
using record::display_command;
using record::ExitDescription;
using record::KillSource;
using record::signal_name;
namespace {

using Clock = std::chrono::steady_clock;

Probe probe_of(const ProbeRun& run, Bytes limit, Outcome outcome, const std::string& name) {
  Probe p;
  p.limit = limit;
  p.outcome = outcome;
  p.seconds = run.seconds;
  p.major_faults = run.major_faults;
  // ru_inblock counts 512-byte blocks read from storage by the command and the descendants it
  // waited for (mapped pages read on a fault included).
  p.read_bytes = static_cast<Bytes>(run.usage.ru_inblock) * 512;
  const ExitDescription d = describe_wait_status(run.wait_status, name, KillSource::unknown);
  p.exit_status = d.exit_status;
  switch (outcome) {
    case Outcome::completed:
      p.detail = "exit status 0";
      break;
    case Outcome::too_slow:
      p.detail = "running when stopped";  // at the cutoff: the slowdown column says how late
      break;
    case Outcome::oom_killed:
      p.detail = !run.oom_kills        ? "SIGKILL, no OOM count"  // this kernel does not count OOM kills
                 : *run.oom_kills == 1 ? "OOM killer: 1 process"
                                       : "OOM killer: " + std::to_string(*run.oom_kills) + " processes";
      break;
    case Outcome::cuda_oom:  // fit --gpu's own (gpu_probe.cpp)
    case Outcome::failed:
      p.detail = WIFSIGNALED(run.wait_status) ? "killed by " + signal_name(WTERMSIG(run.wait_status))
                                              : "exit status " + std::to_string(d.exit_status) + ", no OOM kill";
      break;
  }
  return p;
}

double own_cpu_seconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

bool machine_has_swap() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  unsigned long long kib = 0;
  while (in >> key >> kib) {
    if (key == "SwapTotal:") return kib > 0;
    in.ignore(64, '\n');
  }
  return false;
}

}  // namespace

std::string no_cgroup_message(const std::string& why_not) {
  return "each run needs a memory cgroup of its own, and qprof may not create one here (" + why_not +
         "): run it as root, inside a delegated cgroup v2 subtree, or inside a Slurm job's cgroup (on a cgroup v2 "
         "machine with a systemd user session, qprof fit runs itself in a delegated scope of it).";
}

namespace {

// One fit: the options, what it found so far, and the state the runs share.
struct Search {
  Search(const FitOptions& options, const std::function<void(const Progress&)>& on_progress, FitReport& report)
      : o(options), progress(on_progress), r(report) {}
  const FitOptions& o;
  const std::function<void(const Progress&)>& progress;
  FitReport& r;
  StopSignals signals;
  InputFiles files;
  std::string name;
  Clock::time_point start = Clock::now();

  double elapsed() const { return std::chrono::duration<double>(Clock::now() - start).count(); }

  void interrupted(int sig) {
    r.end = FitEnd::interrupted;
    r.status = 128 + sig;
    r.message =
        r.baseline ? "stopped by " + signal_name(sig) + " before the search ended: the findings rest on the runs so far"
                   : "stopped by " + signal_name(sig) + " during the unlimited run: nothing was found yet";
  }

  void cannot_start(const ProbeRun& run) {
    r.end = FitEnd::cannot_start;
    r.status = run.launch_failure->status;
    r.message = run.launch_failure->message;
  }

  std::unique_ptr<ProbeGroup> group() {
    Result<std::unique_ptr<ProbeGroup>> g = ProbeGroup::create();
    if (g) return std::move(*g);
    r.end = FitEnd::no_cgroup;
    r.status = 2;
    r.message = no_cgroup_message(g.failure().message);
    return nullptr;
  }

  // A run with its group's page cache evicted after it, so that the next starts from the same state.
  ProbeRun run_in(std::unique_ptr<ProbeGroup> g, const ProbeWatch& watch) {
    const ProbeRun run = run_probe(o.command, *g, signals, watch);
    r.eviction_cpu_s += g->evict();
    g.reset();
    r.probes_s += run.seconds;
    return run;
  }

  bool run_baseline();
  void measure_input();
  bool run_limited(Bytes limit);
  void search_limits();
};

// The unlimited run; false where the fit ends with it (r says why).
bool Search::run_baseline() {
  auto g = group();
  if (!g) return false;
  r.cgroup = g->is_v1() ? "v1" : "v2";
  const ProbeRun first =
      run_in(std::move(g), {.deadline_s = std::nullopt, .sample_every_s = o.sample_every_s, .files = &files});
  if (first.launch_failure) {
    cannot_start(first);
    return false;
  }
  if (first.stopped_by_signal) {
    interrupted(first.stopped_by_signal);
    return false;
  }
  const ExitDescription d = describe_wait_status(first.wait_status, name, KillSource::unknown);
  if (d.exit_status != 0) {
    r.end = FitEnd::job_failed;
    r.status = d.exit_status;
    // The unlimited run has no limit of qprof's: a SIGKILL there is an enclosing limit's OOM
    // killer (the machine's, a container's, a Slurm job's) or someone's kill -9; qprof cannot
    // tell which from here, so it names both.
    const std::string oom_hint =
        d.signal == SIGKILL ? "; with no limit of qprof's on this run, that is the OOM killer of a limit around qprof "
                              "(the machine's memory, a container's or a Slurm job's) or a kill -9 from elsewhere"
                            : "";
    r.message = "the command failed in the unlimited run (" +
                (d.signal ? "killed by " + signal_name(d.signal) : "exit status " + std::to_string(d.exit_status)) +
                oom_hint + "), so there is no limit to fit; qprof fit exits with its status";
    return false;
  }
  Baseline baseline;
  baseline.run = probe_of(first, 0, Outcome::completed, name);
  baseline.charge_peak = first.charge_peak.value_or(0);
  baseline.unreclaimable_peak = first.unreclaimable_peak.value_or(0);
  r.baseline = baseline;
  r.cutoff_s = std::max(o.max_slowdown * baseline.run.seconds, o.min_cutoff_s);
  return true;
}

// What of the job's input stayed cached once its group was evicted: another cgroup's pages.
// Reported even where no file was seen: --cold then evicted nothing, which the user must be told.
void Search::measure_input() {
  InputReport in;
  in.files = files.count();
  in.size = files.size();
  in.cached_outside = files.resident();
  in.cold = o.cold;
  r.input = in;
}

// One limited run; false where the search ends with it (r says why).
bool Search::run_limited(Bytes limit) {
  auto g = group();
  if (!g) return false;
  const LimitWrite w = g->limit(limit);
  if (!w.ok) {
    r.end = FitEnd::probe_error;
    r.status = 2;
    r.message = "cannot set the probe's memory limit: " + w.error;
    return false;
  }
  if (!w.swap_limited && r.swap_limited) {
    r.swap_limited = false;
    r.notes.push_back(std::string("swap cannot be limited here (") +
                      (g->is_v1() ? "no memory.memsw.limit_in_bytes: swap accounting is off" : "no memory.swap.max") +
                      (machine_has_swap() ? "): a probe may swap where it would be OOM-killed"
                                          : "), and this machine has no swap in use now"));
  }
  const ProbeRun run = run_in(std::move(g), {.deadline_s = r.cutoff_s});
  if (run.stopped_by_signal) {
    interrupted(run.stopped_by_signal);
    return false;
  }
  if (run.launch_failure) {
    cannot_start(run);
    return false;
  }
  r.probes.push_back(probe_of(run, limit, outcome_of(run.wait_status, run.stopped_at_deadline, run.oom_kills), name));
  return true;
}

// --cold: the job's input out of the page cache before a run, and what stayed there measured.
void evict_input(const InputFiles& files, InputReport& in) {
  in.not_evicted = std::max(in.not_evicted, files.evict());
  in.left_after_eviction = std::max(in.left_after_eviction, files.resident());
}

void Search::search_limits() {
  r.command = display_command(o.command);
  r.max_slowdown = o.max_slowdown;
  r.full_speed_margin = o.full_speed_margin;
  r.resolution = o.resolution;
  name = o.command.empty() ? std::string() : o.command.front();
  if (signals.error() != 0) {
    r.end = FitEnd::probe_error;
    r.status = 2;
    r.message = std::string("cannot watch for signals: ") + std::strerror(signals.error());
    return;
  }
  if (progress) progress({1, 0, 0, elapsed()});
  if (!run_baseline()) return;
  measure_input();
  if (o.cold && r.input) {
    evict_input(files, *r.input);
    // The unlimited run read some of its input from another group's cache: made again cold, its
    // duration and its charge are the ones the limits are searched between.
    if (r.input->cached_outside > o.resolution.floor) {
      r.input->baseline_again = true;
      if (progress) progress({1, 0, 0, elapsed()});
      if (!run_baseline()) return;
    }
  }
  LimitSearch search(*r.baseline, o.resolution, o.full_speed_margin);
  for (int runs = 1 + (r.input && r.input->baseline_again);;) {
    if (signals.stop_signal() != 0) {
      interrupted(signals.stop_signal());
      break;
    }
    const auto limit = search.next();
    if (!limit) break;
    if (runs_max_reached(runs, o, r)) break;
    ++runs;
    if (progress) progress({runs, std::min(o.runs_max, runs + search.remaining_estimate() - 1), *limit, elapsed()});
    if (o.cold && r.input) evict_input(files, *r.input);
    if (!run_limited(*limit)) break;
    search.add(r.probes.back());
  }
  r.findings = search.findings();
  r.reference_s = search.reference_seconds();
}

}  // namespace

bool runs_max_reached(int runs, const FitOptions& o, FitReport& r) {
  if (runs < o.runs_max) return false;
  r.end = FitEnd::runs_max;
  r.message = "--runs-max " + std::to_string(o.runs_max) + " reached before every limit was found to the resolution";
  return true;
}

FitReport run_fit(const FitOptions& o, const std::function<void(const Progress&)>& progress) {
  FitReport r;
  const double cpu_at_start = own_cpu_seconds();
  if (o.gpu) {
    search_gpu_limits(o, progress, r);
  } else {
    Search{o, progress, r}.search_limits();
  }
  // Everything qprof did meanwhile: starting and waiting for the runs, sampling, writing limits,
  // evicting each group's cache (force_empty reclaims in the writer's time, counted apart in
  // eviction_cpu_s), removing groups.
  r.qprof_cpu_s = own_cpu_seconds() - cpu_at_start;
  return r;
}

}  // namespace qprof::fit
