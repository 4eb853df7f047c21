// Job control at a terminal: Ctrl-Z stops the job and qprof together, as it would stop the job
// alone without qprof, and fg/bg continue both. Before stopping, qprof gives the terminal back
// (the live line's row and scrolling region) and puts what it sampled on disk, so that a shell
// prompt is whole and a trace read while the job is stopped is complete.
#include <signal.h>
#include <unistd.h>

#include "session_state.hpp"

namespace qprof::session_detail {

bool Session::job_control() {
  SignalRelay::Received r;
  if (!signals_->take_stop(r)) {
    // Continued without having stopped itself (kill -STOP, then kill -CONT): the terminal may
    // have been someone else's meanwhile, so the live line sets itself up again. The time
    // stopped is unknown here and left in the mean interval.
    if (!signals_->take_continued()) return false;
    if (live_) live_->resume();
    return true;
  }
  if (live_) live_->suspend();
  flush_trace();
  // A key at the terminal reached the command's group when it shares qprof's; a SIGTSTP sent to
  // qprof alone (kill -TSTP) is passed on, as qprof passes on SIGINT and SIGTERM. An attached
  // process is never signalled.
  const bool job_got_it = r.from_terminal && !own_process_group_ && ::getpgid(cmd_pid_) == ::getpgrp();
  const bool forward = !attached_ && !cmd_exited_ && !job_got_it;
  const pid_t target = own_process_group_ ? -cmd_pid_ : cmd_pid_;
  if (forward) ::kill(target, SIGTSTP);
  const std::int64_t stopped_at = monotonic_ns();
  signals_->stop_process();
  const std::int64_t continued_at = monotonic_ns();
  if (forward && !cmd_exited_) ::kill(target, SIGCONT);
  // No SIGCONT: the kernel discarded the stop (qprof's group is orphaned, as under setsid), and
  // the job, continued just above, goes on with qprof as it would alone there.
  if (signals_->take_continued()) {
    ++report_.stops;
    report_.stopped_seconds += static_cast<double>(continued_at - stopped_at) / kNs;
  }
  if (live_) live_->resume();
  return true;
}

}  // namespace qprof::session_detail
