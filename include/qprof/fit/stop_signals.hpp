// SPDX-License-Identifier: Apache-2.0
// The signals qprof fit waits on, turned into readable bytes: SIGCHLD (a probe ended), SIGINT,
// SIGTERM, SIGHUP and SIGQUIT (the search is to stop), SIGTSTP (Ctrl-Z: stopped, and the time
// stopped counted apart). One poll(2) then waits for a probe's end, its deadline and the user at
// once. Installed for the object's lifetime; the previous handlers come back.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <vector>

namespace qprof::fit {

class StopSignals {
 public:
  // One at a time (a precondition, asserted: fit runs one search). Without a pipe (no descriptor
  // left) nothing is installed and error() says why: the caller ends before its first run.
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  int error() const { return error_; }  // the errno of a pipe not made, 0 when it was
  int fd() const;                       // readable when a signal came
  void drain() const;                   // reads what is there, so that the next poll waits again
  int stop_signal() const;              // SIGINT, SIGTERM, SIGHUP or SIGQUIT once asked to stop, else 0
  // Seconds qprof spent stopped (Ctrl-Z until fg or bg) since the process began: a probe's
  // duration leaves out what this grew by while it ran.
  double stopped_seconds() const;
  // The probe running now (0: none), stopped and continued with qprof.
  static void set_probe(pid_t pid);
  // While one lives, a Ctrl-Z waits (blocked in this thread): a probe being started is in its
  // group before set_probe knows its pid, and a stop then would leave it running while its time
  // was counted as stopped.
  class StopsHeld {
   public:
    StopsHeld();
    ~StopsHeld();
    StopsHeld(const StopsHeld&) = delete;
    StopsHeld& operator=(const StopsHeld&) = delete;
  };
  // The signals the command must get back at their defaults (LaunchRequest::default_signals).
  static std::vector<int> handled();
  static constexpr int kHandled = 6;

 private:
  struct sigaction old_[kHandled] {};
  bool installed_[kHandled]{};
  int error_ = 0;
};

}  // namespace qprof::fit
