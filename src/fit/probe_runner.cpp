// SPDX-License-Identifier: Apache-2.0
#include "qprof/fit/probe_runner.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <variant>

#include "qprof/common/proc_file.hpp"

namespace qprof::fit {
using record::launch;
using record::LaunchRequest;
namespace {

using Clock = std::chrono::steady_clock;

// Seconds since t0 that the probe could run: the time qprof and the probe were stopped (Ctrl-Z)
// is left out, as `qprof run` leaves it out of its figures.
struct RunningClock {
  const StopSignals& signals;
  Clock::time_point t0 = Clock::now();
  double stopped0 = signals.stopped_seconds();
  double seconds() const {
    const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
    return std::max(0.0, wall - (signals.stopped_seconds() - stopped0));
  }
};

// Reaps `pid` if it ended; true then.
bool reap(pid_t pid, ProbeRun& run, bool block) {
  for (;;) {
    const pid_t r = ::wait4(pid, &run.wait_status, block ? 0 : WNOHANG, &run.usage);
    if (r == pid) return true;
    if (r == 0) return false;
    if (errno != EINTR) return true;  // not our child any more: nothing to wait for
  }
}

std::string read_text(const std::string& path) {
  std::string text;
  read_small_file(path, text);
  return text;
}

struct Sampler {
  ProbeGroup& group;
  ProbeRun& run;
  InputFiles* files;
  int samples = 0;
  void sample() {
    // The open files at every sample: a job may read its input from cache and close it within a few
    // tens of milliseconds. The maps every fifth: the kernel writes a line per mapping (hundreds
    // for an interpreter), and a mapped input stays mapped while it is read.
    if (files) files->scan(record::cgroup_procs_pids(read_text(group.procs_path())), samples++ % 5 == 0);
    if (const auto charge = group.charge()) run.charge_peak = std::max(run.charge_peak.value_or(0), *charge);
    if (const auto u = unreclaimable_bytes(group.memory_stat(), group.is_v1())) {
      run.unreclaimable_peak = std::max(run.unreclaimable_peak.value_or(0), *u);
    }
  }
};

}  // namespace

ProbeRun run_probe(const std::vector<std::string>& argv, ProbeGroup& group, const StopSignals& signals,
                   const ProbeWatch& watch) {
  ProbeRun run;
  LaunchRequest request;
  request.argv = argv;
  request.cgroup_procs = group.procs_path();
  request.default_signals = StopSignals::handled();
  request.stderr_fd = watch.stderr_fd;
  signals.drain();
  const RunningClock clock{signals};
  pid_t pid = 0;
  {
    const StopSignals::StopsHeld held;
    const auto launched = launch(request);
    if (!launched) {
      run.launch_failure = launched.failure();
      return run;
    }
    pid = *launched;
    StopSignals::set_probe(pid);
  }
  Sampler sampler{group, run, watch.files};
  const bool sampling = watch.sample_every_s > 0;
  if (sampling) sampler.sample();
  double next_sample = watch.sample_every_s;
  bool ended = reap(pid, run, false);
  while (!ended) {
    const double now = clock.seconds();
    if (signals.stop_signal() != 0) {
      run.stopped_by_signal = signals.stop_signal();
      break;
    }
    if (watch.deadline_s && now >= *watch.deadline_s) {
      run.stopped_at_deadline = true;
      break;
    }
    if (sampling && now >= next_sample) {
      sampler.sample();
      next_sample = now + watch.sample_every_s;
    }
    double wait_s = 1.0;
    if (watch.deadline_s) wait_s = std::min(wait_s, *watch.deadline_s - now);
    if (sampling) wait_s = std::min(wait_s, next_sample - now);
    pollfd p{signals.fd(), POLLIN, 0};
    ::poll(&p, 1, std::max(0, static_cast<int>(std::ceil(wait_s * 1000))));
    signals.drain();
    ended = reap(pid, run, false);
  }
  if (!ended) {
    group.kill_all();
    reap(pid, run, true);
  }
  StopSignals::set_probe(0);
  // A Ctrl-C typed at the terminal reaches the command too, which may end of it first: its end
  // then says nothing of the limit.
  if (run.stopped_by_signal == 0) run.stopped_by_signal = signals.stop_signal();
  run.seconds = clock.seconds();
  // What the command left behind (daemons, workers it did not wait for) goes with the probe.
  group.kill_all();
  run.oom_kills = group.oom_kills();
  if (const auto peak = group.peak_charge()) run.charge_peak = std::max(run.charge_peak.value_or(0), *peak);
  run.major_faults = stat_value(group.memory_stat(), "pgmajfault");
  if (!run.major_faults) run.major_faults = static_cast<std::uint64_t>(run.usage.ru_majflt);
  return run;
}

}  // namespace qprof::fit
