// SPDX-License-Identifier: Apache-2.0
// The signals `qprof run` handles on its sampler thread. Handlers only record what arrived; the
// run loop acts on it (forwarding to the command, reaping), woken because the signal cuts its
// clock_nanosleep short.
#pragma once

#include <pthread.h>

#include <vector>

namespace qprof::record {

// The first stop signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) that reached qprof since the last
// clear_stop_signal(), through a relay or note_stop_signal: after a run, whether qprof was asked
// to stop even where the command outlived the signal. Async-signal-safe.
int received_stop_signal();
void clear_stop_signal();
// For a handler of qprof's between runs (runs::StopLatch): the signal counts as one a relay got.
void note_stop_signal(int sig);

class SignalRelay {
 public:
  // Installs the handlers on the calling thread's process; other threads must block signals.
  SignalRelay();
  ~SignalRelay();  // restores the previous dispositions
  SignalRelay(const SignalRelay&) = delete;
  SignalRelay& operator=(const SignalRelay&) = delete;

  struct Received {
    int sig = 0;
    bool from_terminal = false;  // sent by the kernel (a terminal key), not by kill(2)
  };
  // One signal to forward (SIGINT, SIGTERM, SIGHUP, SIGQUIT) if any arrived; false otherwise.
  bool take_forwarded(Received& out);
  // True once per burst of SIGCHLD.
  bool take_child_event();
  // SIGTSTP (Ctrl-Z, or kill -TSTP) if one arrived; the run loop stops qprof with stop_process().
  bool take_stop(Received& out);
  // True once after any SIGCONT (fg, bg, kill -CONT), including the one that ends stop_process().
  bool take_continued();
  // Stops the whole process as SIGTSTP's default action would, returning once it is continued.
  void stop_process();

  // Signals whose disposition qprof changed from the default: the child gets them back.
  const std::vector<int>& changed_from_default() const { return changed_; }

  // Interrupts the sleep of `thread` (the sampler) from another thread.
  static void wake(pthread_t thread);

 private:
  std::vector<int> changed_;
  std::vector<int> installed_;
};

}  // namespace qprof::record
