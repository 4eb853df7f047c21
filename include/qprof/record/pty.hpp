// SPDX-License-Identifier: Apache-2.0
// When qprof's stderr is a terminal, the job's stderr is a pseudo-terminal of qprof's: isatty(2)
// is true in the job (progress bars, colours and width logic behave as without qprof) while
// qprof still reads every byte for markers. Only stderr: stdin, stdout and the controlling
// terminal stay the real ones (no setsid), so job control and the terminal's keys work as before.
#pragma once

#include <memory>
#include <string>

#include "qprof/common/failure.hpp"

namespace qprof::record {

class StderrPty {
 public:
  // A pty with `terminal`'s window size and modes (output processing off, so that bytes pass
  // unchanged: the real terminal does it), or the Failure that says why not.
  static Result<std::unique_ptr<StderrPty>> open_like(int terminal);
  ~StderrPty();  // restores SIGWINCH's previous handler, closes what was not taken
  StderrPty(const StderrPty&) = delete;
  StderrPty& operator=(const StderrPty&) = delete;

  // qprof's end (read by the stderr tee) and the job's end (its stderr): the caller owns them.
  int take_master();
  int take_slave();

 private:
  StderrPty(int master, int slave, int resize_fd);
  int master_;
  int slave_;
  int resize_fd_;  // a copy of the master kept for SIGWINCH: the window size follows the terminal's
};

}  // namespace qprof::record
