// qprof attach: the session follows a process it did not start. What differs from a run: no
// launch, no stderr (the process's is not qprof's), its exit is learnt through a pidfd rather
// than wait4, its status only if /proc shows it before the parent reaps it, and nothing ever
// signals it (--timeout, Ctrl-C and SIGTERM stop the attach, not the process).
#include <iostream>

#include "qprof/common/safe_text.hpp"
#include "qprof/record/launcher.hpp"
#include "session_state.hpp"

namespace qprof::session_detail {

bool Session::open_attached() {
  auto opened = AttachedProcess::open(*o_.attach, o_.proc_root);
  if (const auto* why = std::get_if<std::string>(&opened)) {
    std::cerr << "qprof: " << *why << '\n';
    return false;
  }
  attached_ = std::move(std::get<std::unique_ptr<AttachedProcess>>(opened));
  report_.attached = true;
  return true;
}

void Session::start_attached() {
  cmd_pid_ = attached_->pid();
  if (!o_.quiet) {
    std::cerr << "qprof: attached to process " << cmd_pid_ << " and its descendants; its stderr is not qprof's, so "
              << "stderr markers are not seen; it stops at the process's exit, --timeout or Ctrl-C, which never "
                 "signal the process\n";
  }
  // The process did not inherit the channel: the FIFO is how it (or `qprof mark`, given the
  // variable) can still send markers and synchronous checkpoints. Said even with -q: it is not
  // part of the summary, and nothing else names it.
  if (channel_) {
    std::cerr << "qprof: markers: QPROF_MARK_PATH=" << terminal_text(channel_->fifo_path())
              << " (lines written to this FIFO are markers)\n";
  }
}

void Session::watch_attached() {
  if (cmd_exited_ || !attached_->exited()) return;
  cmd_exited_ = true;
  // Read as a zombie, before its parent reaps it, if that parent has not yet.
  const std::optional<int> status = attached_->wait_status();
  report_.exit_status_known = status.has_value();
  cmd_status_ = status.value_or(0);
  // Its final counters, then it leaves the tree: a zombie that its parent does not reap would
  // otherwise hold the tree open.
  sampler_->before_reap(cmd_pid_);
  for (Member& m : tree_->members()) {
    if (m.is_root) m.gone = true;
  }
  sampler_->prune();
}

}  // namespace qprof::session_detail
