// SPDX-License-Identifier: Apache-2.0
// A batch of runs (compare --run, sweep) asked to stop. While a latch lives, SIGINT, SIGTERM,
// SIGHUP and SIGQUIT between two runs are noted instead of killing qprof with their default
// action; during a run the session passes them on to the command and notes them the same way
// (record::received_stop_signal). The batch then stops before its next run and says what it
// measured. A signal ignored by whoever started qprof (nohup) stays ignored.
#pragma once

#include <signal.h>

namespace qprof::runs {

class StopLatch {
 public:
  StopLatch();   // forgets any signal noted before
  ~StopLatch();  // the previous dispositions come back
  StopLatch(const StopLatch&) = delete;
  StopLatch& operator=(const StopLatch&) = delete;

  // The first stop signal since the latch was made, else 0.
  int signal() const;

  static constexpr int kHandled = 4;

 private:
  struct sigaction old_[kHandled] {};
  bool installed_[kHandled]{};
};

}  // namespace qprof::runs
