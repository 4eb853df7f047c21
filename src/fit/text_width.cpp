// SPDX-License-Identifier: Apache-2.0
#include "qprof/fit/text_width.hpp"

#include <algorithm>

#include "qprof/common/text_wrap.hpp"

namespace qprof::fit {
namespace {

// The byte offset after `n` columns of `s` (or its size).
std::size_t offset_of_column(std::string_view s, std::size_t n) {
  std::size_t i = 0, seen = 0;
  while (i < s.size()) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (seen == n) return i;
      ++seen;
    }
    ++i;
  }
  return i;
}

// A unit after a number stays on its line: "1.2 s", "104.8 MiB" (common's rule, as every message).
bool unit_follows(std::string_view line, std::size_t space) { return !may_break_at(line, space); }

// Where the word running over byte `cut` ends: the next space not before a unit, or the end.
std::size_t word_end(std::string_view line, std::size_t cut) {
  std::size_t space = line.find(' ', cut);
  while (space != std::string_view::npos && unit_follows(line, space)) space = line.find(' ', space + 1);
  return space == std::string_view::npos ? line.size() : space;
}

}  // namespace

std::string wrap_line(std::string_view line, std::size_t width, std::size_t indent) {
  width = std::max<std::size_t>(width, 1);
  if (indent + 8 > width) indent = std::min<std::size_t>(2, width / 2);
  std::string out;
  std::string prefix;
  for (;;) {
    const std::size_t room = width - prefix.size();
    // Columns are UTF-8 characters (common's text_columns): the text is terminal_text()'s.
    if (text_columns(line) <= room) {
      out += prefix + std::string(line) + '\n';
      return out;
    }
    const std::size_t cut = offset_of_column(line, room);  // the first byte that does not fit
    std::size_t space = line.rfind(' ', cut);
    while (space != std::string_view::npos && space > 0 && unit_follows(line, space))
      space = line.rfind(' ', space - 1);
    // Break at the last space that leaves text on this line; none: after the word that is wider
    // than the line, whole on a line of its own (a cgroup path stays one to copy), as --help and
    // report's notes keep it.
    std::size_t end = space != std::string_view::npos && space > 0 ? space : std::string_view::npos;
    while (end != std::string_view::npos && end > 0 && line[end - 1] == ' ') --end;
    if (end == std::string_view::npos || end == 0) end = word_end(line, cut);
    out += prefix + std::string(line.substr(0, end)) + '\n';
    line.remove_prefix(end);
    while (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    if (line.empty()) return out;
    prefix.assign(indent, ' ');
  }
}

std::string wrap_text(std::string_view text, std::size_t width) {
  std::string out;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    const std::size_t lead = line.find_first_not_of(' ');
    out += wrap_line(line, width, (lead == std::string_view::npos ? 0 : lead) + 4);
  }
  return out;
}

}  // namespace qprof::fit
