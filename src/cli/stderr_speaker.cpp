// SPDX-License-Identifier: Apache-2.0
#include "stderr_speaker.hpp"

#include <unistd.h>

#include <iostream>
#include <string_view>

#include "qprof/common/safe_text.hpp"
#include "qprof/common/text_wrap.hpp"
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

// A message as wide as the terminal it is read in (80 into a pipe or a log): a line wider is
// broken at its last space that fits, the rest indented under it; lines the message breaks
// itself (gnuplot's own, a list) keep their breaks. What a message quotes from a trace or a job
// (a host name, a label) is shown, never acted upon: a caller that forgot to escape it cannot
// hand the terminal an escape sequence (escaping twice changes nothing).
void say_on_stderr(const std::string& prefix, const std::string& message) {
  write_to_stderr(fit_lines(prefix + terminal_lines(message), output_columns(STDERR_FILENO), prefix.size()));
}

}  // namespace

Speaker stderr_speaker(const std::string& who) {
  const std::string prefix = who.empty() ? "qprof: " : "qprof " + who + ": ";
  return Speaker([prefix](const std::string& message) { say_on_stderr(prefix, message); },
                 [](const std::string& text) { write_to_stderr(text); });
}

void warn_on_stderr(const std::string& warning) { say_on_stderr("qprof: warning: ", warning); }

}  // namespace qprof::cli
