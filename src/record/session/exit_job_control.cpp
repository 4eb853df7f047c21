// SPDX-License-Identifier: Apache-2.0
// Job control at a terminal: Ctrl-Z stops the job and qprof together, as it would stop the job
// alone without qprof, and fg/bg continue both. Before stopping, qprof gives the terminal back
// (the live line's row and scrolling region) and puts what it sampled on disk, so that a shell
// prompt is whole and a trace read while the job is stopped is complete.
#include <signal.h>
#include <unistd.h>

#include "exit_tracker.hpp"
#include "qprof/common/clock.hpp"

namespace qprof::record::session {

bool ExitTracker::job_control(SignalRelay& signals, LiveView& live, TraceSink& trace) {
  SignalRelay::Received r;
  if (!signals.take_stop(r)) {
    // Continued without having stopped itself (kill -STOP, then kill -CONT): the terminal may
    // have been someone else's meanwhile, so the live line sets itself up again. The time
    // stopped is unknown here and left in the mean interval.
    if (!signals.take_continued()) return false;
    live.resume();
    return true;
  }
  live.suspend();
  trace.flush();
  // A key at the terminal reached the command's group when it shares qprof's; a SIGTSTP sent to
  // qprof alone (kill -TSTP) is passed on, as qprof passes on SIGINT and SIGTERM. An attached
  // process is never signalled.
  const pid_t pid = command_.pid;
  const bool job_got_it = r.from_terminal && !command_.own_process_group && ::getpgid(pid) == ::getpgrp();
  const bool forward = !command_.attached && !exited_ && !job_got_it;
  const pid_t target = command_.own_process_group ? -command_.process_group : pid;
  if (forward) ::kill(target, SIGTSTP);
  const std::int64_t stopped_at = monotonic_ns();
  signals.stop_process();
  const std::int64_t continued_at = monotonic_ns();
  if (forward && !exited_) ::kill(target, SIGCONT);
  // No SIGCONT: the kernel discarded the stop (qprof's group is orphaned, as under setsid), and
  // the job, continued just above, goes on with qprof as it would alone there.
  if (signals.take_continued()) {
    ++stops_;
    stopped_seconds_ += static_cast<double>(continued_at - stopped_at) / 1e9;
  }
  live.resume();
  return true;
}

}  // namespace qprof::record::session
