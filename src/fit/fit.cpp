// SPDX-License-Identifier: Apache-2.0
#include "qprof/fit/fit.hpp"

#include <signal.h>
#include <time.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>

#include "qprof/common/units.hpp"
#include "qprof/fit/gpu_fit.hpp"
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

Probe probe_of(const ProbeRun& run, Bytes limit, Outcome outcome, const std::string& name, double cutoff_s) {
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
      p.detail = "still running at " + human_seconds(cutoff_s) + ", stopped by qprof";
      break;
    case Outcome::oom_killed:
      p.detail = run.oom_kills ? "the OOM killer killed " + std::to_string(*run.oom_kills) + " process(es) of the group"
                               : "killed by SIGKILL (this kernel does not count OOM kills)";
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

// The launcher's words start "qprof: "; fit prints its messages after "qprof fit: ".
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

// The search; run_fit adds qprof's own CPU time around it.
void search_limits(const FitOptions& o, const std::function<void(const Progress&)>& progress, FitReport& r) {
  r.command = display_command(o.command);
  r.max_slowdown = o.max_slowdown;
  r.full_speed_margin = o.full_speed_margin;
  r.resolution = o.resolution;
  const std::string name = o.command.empty() ? std::string() : o.command.front();
  const Clock::time_point start = Clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  const auto account = [&](const ProbeRun& run) { r.probes_s += run.seconds; };
  const auto interrupted = [&](int sig) {
    r.end = FitEnd::interrupted;
    r.status = 128 + sig;
    r.message =
        r.baseline ? "stopped by " + signal_name(sig) + " before the search ended: the findings rest on the runs so far"
                   : "stopped by " + signal_name(sig) + " during the unlimited run: nothing was found yet";
  };
  StopSignals signals;
  std::string why_not;
  auto group = ProbeGroup::create(why_not);
  if (!group) {
    r.end = FitEnd::no_cgroup;
    r.status = 2;
    r.message = no_cgroup_message(why_not);
    return;
  }
  r.cgroup = group->is_v1() ? "v1" : "v2";
  if (progress) progress({1, 0, 0, elapsed()});
  const ProbeRun first = run_probe(o.command, *group, signals, {std::nullopt, o.sample_every_s});
  r.eviction_cpu_s += group->evict();  // the probes start from the same (cold) cache state
  group.reset();
  account(first);
  if (first.launch_failure) {
    r.end = FitEnd::cannot_start;
    r.status = first.launch_failure->status;
    r.message = first.launch_failure->message;
    return;
  }
  if (first.stopped_by_signal) {
    interrupted(first.stopped_by_signal);
    return;
  }
  const ExitDescription d = describe_wait_status(first.wait_status, name, KillSource::unknown);
  if (d.exit_status != 0) {
    r.end = FitEnd::job_failed;
    r.status = d.exit_status;
    // The unlimited run has no limit of qprof's: a SIGKILL there is an enclosing limit's OOM
    // killer (the machine's, a container's, a Slurm job's) far more often than anyone else.
    const std::string oom_hint =
        d.signal == SIGKILL ? "; with no limit of qprof's on this run, that is most likely the OOM killer of a limit "
                              "around qprof (the machine's memory, a container's or a Slurm job's)"
                            : "";
    r.message = "the command failed in the unlimited run (" +
                (d.signal ? "killed by " + signal_name(d.signal) : "exit status " + std::to_string(d.exit_status)) +
                oom_hint + "), so there is no limit to fit; qprof fit exits with its status";
    return;
  }
  Baseline baseline;
  baseline.run = probe_of(first, 0, Outcome::completed, name, 0);
  baseline.charge_peak = first.charge_peak.value_or(0);
  baseline.unreclaimable_peak = first.unreclaimable_peak.value_or(0);
  r.baseline = baseline;
  r.cutoff_s = std::max(o.max_slowdown * baseline.run.seconds, o.min_cutoff_s);

  LimitSearch search(baseline, o.resolution, o.full_speed_margin);
  int runs = 1;
  for (;;) {
    if (signals.stop_signal() != 0) {
      interrupted(signals.stop_signal());
      break;
    }
    const auto limit = search.next();
    if (!limit) break;
    if (runs >= o.runs_max) {
      r.end = FitEnd::runs_max;
      r.message =
          "--runs-max " + std::to_string(o.runs_max) + " reached before every limit was found to the resolution";
      break;
    }
    ++runs;
    if (progress) progress({runs, std::min(o.runs_max, runs + search.remaining_estimate() - 1), *limit, elapsed()});
    group = ProbeGroup::create(why_not);
    if (!group) {
      r.end = FitEnd::no_cgroup;
      r.status = 2;
      r.message = no_cgroup_message(why_not);
      break;
    }
    const LimitWrite w = group->limit(*limit);
    if (!w.ok) {
      r.end = FitEnd::probe_error;
      r.status = 2;
      r.message = "cannot set the probe's memory limit: " + w.error;
      break;
    }
    if (!w.swap_limited && r.swap_limited) {
      r.swap_limited = false;
      r.notes.push_back(
          std::string("swap cannot be limited here (") +
          (group->is_v1() ? "no memory.memsw.limit_in_bytes: swap accounting is off" : "no memory.swap.max") +
          (machine_has_swap() ? "): a probe may swap where it would be OOM-killed"
                              : "), and this machine has no swap in use now"));
    }
    const ProbeRun run = run_probe(o.command, *group, signals, {r.cutoff_s, 0});
    r.eviction_cpu_s += group->evict();
    group.reset();
    account(run);
    if (run.stopped_by_signal) {
      interrupted(run.stopped_by_signal);
      break;
    }
    if (run.launch_failure) {
      r.end = FitEnd::cannot_start;
      r.status = run.launch_failure->status;
      r.message = run.launch_failure->message;
      break;
    }
    const Probe p =
        probe_of(run, *limit, outcome_of(run.wait_status, run.stopped_at_deadline, run.oom_kills), name, r.cutoff_s);
    search.add(p);
    r.probes.push_back(p);
  }
  r.findings = search.findings();
  r.reference_s = search.reference_seconds();
}

}  // namespace

FitReport run_fit(const FitOptions& o, const std::function<void(const Progress&)>& progress) {
  FitReport r;
  const double cpu_at_start = own_cpu_seconds();
  if (o.gpu) {
    search_gpu_limits(o, progress, r);
  } else {
    search_limits(o, progress, r);
  }
  // Everything qprof did meanwhile: starting and waiting for the runs, sampling, writing limits,
  // evicting each group's cache (force_empty reclaims in the writer's time, counted apart in
  // eviction_cpu_s), removing groups.
  r.qprof_cpu_s = own_cpu_seconds() - cpu_at_start;
  return r;
}

}  // namespace qprof::fit
