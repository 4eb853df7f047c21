// SPDX-License-Identifier: Apache-2.0
#include "stderr_speaker.hpp"

#include <iostream>

namespace qprof::cli {

Speaker stderr_speaker() {
  return Speaker([](const std::string& message) { std::cerr << "qprof: " << message << '\n'; },
                 [](const std::string& text) { std::cerr << text; });
}

void warn_on_stderr(const std::string& warning) { std::cerr << "qprof: warning: " << warning << '\n'; }

}  // namespace qprof::cli
