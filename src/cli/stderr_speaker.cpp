// SPDX-License-Identifier: Apache-2.0
#include "stderr_speaker.hpp"

#include <unistd.h>

#include <cerrno>
#include <iostream>
#include <string_view>

namespace qprof::cli {
namespace {

// The whole text on fd 2, in one write where the kernel takes it so (a line then never splits
// around what the job writes to the same terminal). A signal that cuts a write short (qprof's
// relay installs its handlers without SA_RESTART, to wake the sampler) is no failure: the write
// goes on: the C++ error stream would drop the rest of the line there, and every later line.
void write_to_stderr(std::string_view text) {
  // What was printed on stdout before comes first, as the error stream's tie to std::cout did.
  std::cout.flush();
  while (!text.empty()) {
    const ssize_t w = ::write(STDERR_FILENO, text.data(), text.size());
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // stderr closed or gone: the trace and the exit status still say it
    text.remove_prefix(static_cast<std::size_t>(w));
  }
}

}  // namespace

Speaker stderr_speaker(const std::string& who) {
  const std::string prefix = who.empty() ? "qprof: " : "qprof " + who + ": ";
  return Speaker([prefix](const std::string& message) { write_to_stderr(prefix + message + '\n'); },
                 [](const std::string& text) { write_to_stderr(text); });
}

void warn_on_stderr(const std::string& warning) { write_to_stderr("qprof: warning: " + warning + '\n'); }

}  // namespace qprof::cli
