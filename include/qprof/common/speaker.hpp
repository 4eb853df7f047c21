// SPDX-License-Identifier: Apache-2.0
// Where qprof's words to its user go. cli gives one (to stderr); the rooms below it say through
// it and never print, so that one place decides where words go and how they are marked.
#pragma once

#include <functional>
#include <string>
#include <utility>

namespace qprof {

class Speaker {
 public:
  using Sink = std::function<void(const std::string&)>;
  Speaker() = default;  // says nothing
  Speaker(Sink line, Sink text) : line_(std::move(line)), text_(std::move(text)) {}

  // One message, without "qprof: " or the final newline: the sink puts them around it.
  void line(const std::string& message) const {
    if (line_) line_(message);
  }
  // Text formatted whole (the run's summary, its own prefixes and newlines), written as it is.
  void text(const std::string& formatted) const {
    if (text_) text_(formatted);
  }

 private:
  Sink line_;
  Sink text_;
};

}  // namespace qprof
