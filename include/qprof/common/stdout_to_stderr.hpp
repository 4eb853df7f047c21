// SPDX-License-Identifier: Apache-2.0
// While alive, qprof's stdout (and so a profiled command's, which inherits it) goes to stderr:
// what qprof prints on stdout afterwards (a peak, a table) stays alone there.
#pragma once

namespace qprof {

class StdoutToStderr {
 public:
  StdoutToStderr();
  ~StdoutToStderr();
  StdoutToStderr(const StdoutToStderr&) = delete;
  StdoutToStderr& operator=(const StdoutToStderr&) = delete;

 private:
  int saved_ = -1;
};

}  // namespace qprof
