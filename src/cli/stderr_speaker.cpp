// SPDX-License-Identifier: Apache-2.0
#include "stderr_speaker.hpp"

#include <iostream>

namespace qprof::cli {

Speaker stderr_speaker(const std::string& who) {
  const std::string prefix = who.empty() ? "qprof: " : "qprof " + who + ": ";
  // Each message in one write: std::cerr is unbuffered, so a line put together first leaves whole,
  // never split by what the job writes to the same terminal meanwhile.
  return Speaker([prefix](const std::string& message) { std::cerr << (prefix + message + '\n'); },
                 [](const std::string& text) { std::cerr << text; });
}

void warn_on_stderr(const std::string& warning) { std::cerr << "qprof: warning: " << warning << '\n'; }

}  // namespace qprof::cli
