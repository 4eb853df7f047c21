// SPDX-License-Identifier: Apache-2.0
// Every byte of a text onto a file descriptor, for each of qprof's writers (the trace, its output
// files, the stderr lines, the live line, the copy of the job's stderr).
#pragma once

#include <cstddef>
#include <string_view>

namespace qprof {

struct WriteOutcome {
  std::size_t written = 0;  // bytes from the start of the text that reached the descriptor
  int error = 0;            // 0 when all did, else the errno of the write that failed
  bool ok() const { return error == 0; }
};

// Writes until all of `bytes` is written or a write fails. A signal that cuts a write short is no
// failure: qprof's signal relay installs its handlers without SA_RESTART (to wake the sampler), so
// any write on qprof's threads can return EINTR and is simply made again. A write that takes
// nothing is said as EIO, where a loop would spin.
WriteOutcome write_all(int fd, std::string_view bytes);

}  // namespace qprof
