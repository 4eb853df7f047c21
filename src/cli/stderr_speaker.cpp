// SPDX-License-Identifier: Apache-2.0
#include "stderr_speaker.hpp"

#include <unistd.h>

#include <iostream>
#include <string_view>

#include "qprof/common/write_all.hpp"

namespace qprof::cli {
namespace {

// The whole text on fd 2, in one write where the kernel takes it so (a line then never splits
// around what the job writes to the same terminal). Not the C++ error stream: a signal that cuts
// its write short sets its badbit, and the rest of the line and every later line are dropped.
// A failure is not said: with stderr closed or gone, the trace and the exit status still say it.
void write_to_stderr(std::string_view text) {
  // What was printed on stdout before comes first, as the error stream's tie to std::cout did.
  std::cout.flush();
  write_all(STDERR_FILENO, text);
}

}  // namespace

Speaker stderr_speaker(const std::string& who) {
  const std::string prefix = who.empty() ? "qprof: " : "qprof " + who + ": ";
  return Speaker([prefix](const std::string& message) { write_to_stderr(prefix + message + '\n'); },
                 [](const std::string& text) { write_to_stderr(text); });
}

void warn_on_stderr(const std::string& warning) { write_to_stderr("qprof: warning: " + warning + '\n'); }

}  // namespace qprof::cli
