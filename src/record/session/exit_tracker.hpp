// SPDX-License-Identifier: Apache-2.0
// How the command ends and when the run is over: its processes reaped (the wait status, the
// kernel's peak of each), an attached process's exit noticed, signals passed on, Ctrl-Z and
// fg/bg, and --timeout. After the command, the run waits for the tree only with --wait-daemons.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "live_view.hpp"
#include "notices.hpp"
#include "qprof/record/attach.hpp"
#include "qprof/record/proc_tree.hpp"
#include "qprof/record/sampler.hpp"
#include "qprof/record/signal_relay.hpp"
#include "timeout.hpp"
#include "trace_sink.hpp"

namespace qprof::record::session {

class ExitTracker {
 public:
  struct Command {
    pid_t pid = -1;
    bool attached = false;           // not qprof's child: never signalled
    bool own_process_group = false;  // launched in a group of its own (no controlling terminal)
    pid_t process_group = -1;        // that group's ID
    Bytes qprof_rss_at_launch = 0;   // the command's pre-exec copy of qprof: not its own peak
  };
  ExitTracker(const Command& command, bool wait_daemons, Timeout timeout);

  // A child of qprof's changed state: every one that exited is reaped; `outsiders` (a GPU
  // backend's helpers) are reaped and not counted.
  void reap(Sampler& sampler, std::span<const pid_t> outsiders);
  // Attached: the process's exit, seen through its pidfd; it leaves the tree at once.
  void watch_attached(AttachedProcess& process, Sampler& sampler, ProcTree& tree);
  // SIGINT, SIGTERM, SIGHUP and SIGQUIT that qprof received: passed on to the command; attached,
  // or once only daemons are left, they stop the run instead.
  void relay_signals(SignalRelay& signals, const ProcTree& tree, Notices& notices);
  // Ctrl-Z, fg and bg; true when qprof was stopped or continued (exit_job_control.cpp).
  bool job_control(SignalRelay& signals, LiveView& live, TraceSink& trace);
  void enforce_timeout(std::int64_t now, ProcTree& tree, Notices& notices);
  bool finished(bool tree_empty) const;
  std::optional<std::int64_t> next_deadline() const { return timeout_.next_deadline(); }

  pid_t pid() const { return command_.pid; }
  bool exited() const { return exited_; }
  int wait_status() const { return wait_status_; }
  bool wait_status_known() const;  // attached: seen as a zombie before its parent reaped it
  bool timed_out() const { return timeout_.timed_out(); }
  bool killed() const { return timeout_.killed(); }
  Bytes kernel_peak() const { return kernel_peak_; }  // the largest ru_maxrss of those reaped
  // Members reaped dead of a SIGKILL qprof did not send (the OOM killer's, or anyone's), with
  // their peak RSS (ru_maxrss): handed over once.
  struct Killed {
    pid_t pid;
    Bytes maxrss;
  };
  std::vector<Killed> take_sigkilled() { return std::exchange(sigkilled_, {}); }
  std::uint64_t stops() const { return stops_; }
  Seconds stopped_seconds() const { return stopped_seconds_; }

 private:
  Command command_;
  bool wait_daemons_;
  Timeout timeout_;
  bool exited_ = false;
  int wait_status_ = 0;
  bool attached_status_known_ = false;
  bool stop_waiting_ = false;  // interrupted while only daemons were left, or the attach stopped
  Bytes kernel_peak_ = 0;
  std::vector<Killed> sigkilled_;
  std::uint64_t stops_ = 0;
  Seconds stopped_seconds_ = 0;
  // When each signal number was last passed on (monotonic ns; 0: never).
  std::int64_t last_relayed_ns_[65] = {};
};

}  // namespace qprof::record::session
