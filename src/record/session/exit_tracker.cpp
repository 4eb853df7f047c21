// SPDX-License-Identifier: Apache-2.0
#include "exit_tracker.hpp"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <string>

#include "qprof/common/clock.hpp"
#include "qprof/common/units.hpp"
#include "qprof/record/launcher.hpp"

namespace qprof::record::session {
namespace {

// Long enough for every route of one kill to have arrived (they come within a millisecond), too
// short for a person to press Ctrl-C twice.
constexpr std::int64_t kRepeatWindowNs = 200 * 1000000;

void signal_tree(const ProcTree& tree, int sig) {
  for (const Member& m : tree.members()) ::kill(m.pid, sig);
}

}  // namespace

ExitTracker::ExitTracker(const Command& command, bool wait_daemons, Timeout timeout)
    : command_(command), wait_daemons_(wait_daemons), timeout_(timeout) {}

void ExitTracker::reap(Sampler& sampler, std::span<const pid_t> outsiders) {
  // Peek first (WNOWAIT): a zombie's I/O counters still read, and must be kept before the
  // reap hands them to qprof, which is not part of the tree.
  bool pruned = false;
  while (true) {
    siginfo_t info{};
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) break;
    const pid_t pid = info.si_pid;
    int status = 0;
    rusage usage{};
    if (std::find(outsiders.begin(), outsiders.end(), pid) != outsiders.end()) {
      ::wait4(pid, &status, 0, &usage);  // a GPU backend's helper that died: not the tree's
      continue;
    }
    // The descendants a zombie reaped leave first, so that its wait4 peak can be told from
    // theirs: once for the batch, not a scan of the tree a zombie (orphans come many at a time).
    if (!pruned) {
      sampler.prune();
      pruned = true;
    }
    sampler.before_reap(pid);
    if (::wait4(pid, &status, 0, &usage) != pid) break;
    sampler.after_reap(pid, usage);
    // The kernel's peak of the largest single process, its waited-for descendants included.
    // The command's own figure counts its pre-exec copy of qprof: no larger than qprof itself,
    // it says nothing about the command.
    const Bytes peak = static_cast<Bytes>(usage.ru_maxrss) * 1024;
    if (pid != command_.pid || peak > command_.qprof_rss_at_launch) kernel_peak_ = std::max(kernel_peak_, peak);
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && !timeout_.killed()) sigkilled_.push_back({pid, peak});
    if (pid == command_.pid) {
      wait_status_ = status;
      exited_ = true;
    }
  }
  sampler.prune();
}

void ExitTracker::watch_attached(AttachedProcess& process, Sampler& sampler, ProcTree& tree) {
  if (exited_ || !process.exited()) return;
  exited_ = true;
  // Read as a zombie, before its parent reaps it, if that parent has not yet.
  const std::optional<int> status = process.wait_status();
  attached_status_known_ = status.has_value();
  wait_status_ = status.value_or(0);
  // Its final counters, then it leaves the tree: a zombie that its parent does not reap would
  // otherwise hold the tree open.
  sampler.prune();
  sampler.before_reap(command_.pid);
  for (Member& m : tree.members()) {
    if (m.is_root) m.gone = true;
  }
  sampler.prune();
}

void ExitTracker::relay_signals(SignalRelay& signals, const ProcTree& tree, Notices& notices) {
  const pid_t pid = command_.pid;
  SignalRelay::Received r;
  while (signals.take_forwarded(r)) {
    // One signal often reaches qprof by several routes within microseconds: a kill of its
    // process group, and a relay that passes it on to qprof and again to the group (timeout
    // does both). The same signal again within kRepeatWindowNs is that one event, not a second.
    const std::int64_t now = monotonic_ns();
    if (r.sig > 0 && r.sig < 65) {
      const bool repeat = last_relayed_ns_[r.sig] != 0 && now - last_relayed_ns_[r.sig] < kRepeatWindowNs;
      if (repeat) continue;
      last_relayed_ns_[r.sig] = now;
    }
    if (command_.attached) {
      // Attached: the process is not qprof's to signal. The signal ends the attach.
      if (!stop_waiting_) {
        notices.warn(signal_name(r.sig) + ": stopping the attach; process " + std::to_string(pid) + " keeps running");
      }
      stop_waiting_ = true;
    } else if (!exited_ && command_.own_process_group) {
      // The command's group is its own: nothing sent to qprof's group reached it, so this is its
      // one delivery, to its whole group as a key at a terminal would have sent it.
      ::kill(-command_.process_group, r.sig);
    } else if (!exited_) {
      // A key pressed at the terminal reached the whole foreground process group, the command
      // included: sending it again would deliver it twice.
      const bool command_got_it = r.from_terminal && ::getpgid(pid) == ::getpgrp();
      if (!command_got_it) ::kill(pid, r.sig);
    } else if (!stop_waiting_) {
      stop_waiting_ = true;
      notices.warn(signal_name(r.sig) + " while waiting for " + std::to_string(tree.members().size()) +
                   " process(es) that outlived the command; stopping, they keep running");
    }
  }
}

void ExitTracker::enforce_timeout(std::int64_t now, ProcTree& tree, Notices& notices) {
  const std::size_t n = tree.members().size();
  switch (timeout_.due(now, !exited_ || wait_daemons_)) {
    case Timeout::Action::none:
      return;
    case Timeout::Action::stop_attach:
      stop_waiting_ = true;
      notices.warn("timeout after " + human_seconds(timeout_.length()) +
                   ": stopping the attach; the process keeps running");
      return;
    case Timeout::Action::terminate:
      signal_tree(tree, SIGTERM);
      notices.warn("timeout after " + human_seconds(timeout_.length()) + ": sent SIGTERM to " + std::to_string(n) +
                   " process(es) of the tree");
      return;
    case Timeout::Action::kill:
      if (n == 0) return;
      signal_tree(tree, SIGKILL);
      notices.warn(std::to_string(n) + " process(es) outlived the " + human_seconds(timeout_.grace()) +
                   " grace period: sent SIGKILL");
      return;
  }
}

bool ExitTracker::finished(bool tree_empty) const {
  if (command_.attached && stop_waiting_) return true;
  if (!exited_) return false;
  return !wait_daemons_ || stop_waiting_ || tree_empty;
}

bool ExitTracker::wait_status_known() const { return !command_.attached || (exited_ && attached_status_known_); }

}  // namespace qprof::record::session
