// SPDX-License-Identifier: Apache-2.0
// Small text helpers shared by the marker reader and the cgroup and limit readers (record/) and
// the stage pairing (trace/).
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

// The text up to and with its last '\n': what a read cut at its bound holds of whole lines (the
// line the cut went through is left out rather than read in part).
inline std::string_view whole_lines(std::string_view text) { return text.substr(0, text.rfind('\n') + 1); }

// Takes the text up to the next `sep` (or to the end) off the front of `rest`; the separator
// goes with it. Lines of a file: take_until(rest, '\n') until rest is empty.
inline std::string_view take_until(std::string_view& rest, char sep) {
  const std::size_t at = rest.find(sep);
  const std::string_view field = rest.substr(0, at);
  rest.remove_prefix(at == std::string_view::npos ? rest.size() : at + 1);
  return field;
}

// Without leading spaces and tabs.
inline std::string_view skip_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

// The first word of `rest` (words are separated by spaces and tabs), taken off its front with
// the blanks before it; empty at the end.
inline std::string_view take_word(std::string_view& rest) {
  rest = skip_blanks(rest);
  std::size_t n = 0;
  while (n < rest.size() && rest[n] != ' ' && rest[n] != '\t') ++n;
  const std::string_view word = rest.substr(0, n);
  rest.remove_prefix(n);
  return word;
}

// Whether the `sep`-separated list holds `item` ("rw,memory,nosuid" holds "memory").
inline bool list_holds(std::string_view list, std::string_view item, char sep = ',') {
  while (!list.empty()) {
    if (take_until(list, sep) == item) return true;
  }
  return false;
}

}  // namespace qprof
