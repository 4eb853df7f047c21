#include "session_state.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>

#include "qprof/common/units.hpp"
#include "qprof/record/launcher.hpp"

namespace qprof::session_detail {

void Session::reap() {
  // Peek first (WNOWAIT): a zombie's I/O counters still read, and must be kept before the
  // reap hands them to qprof, which is not part of the tree.
  while (true) {
    siginfo_t info{};
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) break;
    const pid_t pid = info.si_pid;
    int status = 0;
    rusage usage{};
    if (std::find(gpu_helpers_.begin(), gpu_helpers_.end(), pid) != gpu_helpers_.end()) {
      ::wait4(pid, &status, 0, &usage);  // a GPU backend's helper that died: not the tree's
      continue;
    }
    sampler_->before_reap(pid);
    if (::wait4(pid, &status, 0, &usage) != pid) break;
    sampler_->after_reap(pid, usage);
    // The kernel's peak of the largest single process, its waited-for descendants included.
    // The command's own figure counts its pre-exec copy of qprof: no larger than qprof itself,
    // it says nothing about the command.
    const Bytes peak = static_cast<Bytes>(usage.ru_maxrss) * 1024;
    if (pid != cmd_pid_ || peak > self_rss_at_launch_) kernel_peak_ = std::max(kernel_peak_, peak);
    if (pid == cmd_pid_) {
      cmd_status_ = status;
      cmd_exited_ = true;
    }
  }
  sampler_->prune();
}

void Session::signal_tree(int sig) {
  for (const Member& m : tree_->members()) ::kill(m.pid, sig);
}

void Session::relay_signals() {
  SignalRelay::Received r;
  while (signals_->take_forwarded(r)) {
    if (attached_) {
      // Attached: the process is not qprof's to signal. The signal ends the attach.
      if (!stop_waiting_) warn(signal_name(r.sig) + ": stopping the attach; process " + std::to_string(cmd_pid_) + " keeps running");
      stop_waiting_ = true;
    } else if (!cmd_exited_ && own_process_group_) {
      // The command's group is its own: nothing sent to qprof's group reached it, so this is its
      // one delivery, to its whole group as a key at a terminal would have sent it.
      ::kill(-cmd_pid_, r.sig);
    } else if (!cmd_exited_) {
      // A key pressed at the terminal reached the whole foreground process group, the command
      // included: sending it again would deliver it twice.
      const bool command_got_it = r.from_terminal && ::getpgid(cmd_pid_) == ::getpgrp();
      if (!command_got_it) ::kill(cmd_pid_, r.sig);
    } else if (!stop_waiting_) {
      stop_waiting_ = true;
      warn(signal_name(r.sig) + " while waiting for " + std::to_string(tree_->members().size()) +
           " process(es) that outlived the command; stopping, they keep running");
    }
  }
}

void Session::enforce_timeout(std::int64_t now) {
  if (!o_.timeout || killed_ || (cmd_exited_ && !o_.wait_daemons)) return;
  const std::int64_t timeout_ns = start_ns_ + static_cast<std::int64_t>(*o_.timeout * kNs);
  if (attached_ && now >= timeout_ns) {
    // Attached: the timeout ends the attach and signals nothing.
    report_.timed_out = true;
    killed_ = stop_waiting_ = true;
    warn("timeout after " + human_seconds(*o_.timeout) + ": stopping the attach; the process keeps running");
  } else if (kill_at_ns_ < 0 && now >= timeout_ns) {
    report_.timed_out = true;
    const std::size_t n = tree_->members().size();
    signal_tree(SIGTERM);
    kill_at_ns_ = now + static_cast<std::int64_t>(o_.kill_grace * kNs);
    warn("timeout after " + human_seconds(*o_.timeout) + ": sent SIGTERM to " + std::to_string(n) +
         " process(es) of the tree");
  } else if (kill_at_ns_ >= 0 && now >= kill_at_ns_) {
    killed_ = true;
    const std::size_t n = tree_->members().size();
    if (n > 0) {
      signal_tree(SIGKILL);
      warn(std::to_string(n) + " process(es) outlived the " + human_seconds(o_.kill_grace) +
           " grace period: sent SIGKILL");
    }
  }
}

bool Session::finished() const {
  if (attached_ && stop_waiting_) return true;
  if (!cmd_exited_) return false;
  return !o_.wait_daemons || stop_waiting_ || tree_->empty();
}

}  // namespace qprof::session_detail
