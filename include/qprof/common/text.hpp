// Small text helpers shared by the marker reader (record/) and the stage pairing (trace/).
#pragma once

#include <string_view>

namespace qprof {

// Without leading and trailing blanks (space, tab, CR, LF).
inline std::string_view trim_blanks(std::string_view s) {
  const auto is_space = [](char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

}  // namespace qprof
