// SPDX-License-Identifier: Apache-2.0
#include "qprof/plot/legend_names.hpp"

#include <algorithm>
#include <limits>
#include <string_view>

#include "qprof/common/trace_label.hpp"
#include "qprof/plot/escape.hpp"

namespace qprof::plot {
namespace {

constexpr std::string_view kEllipsis = "…";
constexpr std::string_view kSeparators = "_-./:=, ";

bool separator(char c) { return kSeparators.find(c) != std::string_view::npos; }

// Bytes every name starts with, ending just after a separator (whole words left out, never half
// of one or of a UTF-8 character: separators are ASCII).
std::size_t shared_head(const std::vector<std::string>& names) {
  std::size_t n = names[0].size();
  for (const std::string& s : names) {
    n = std::min(n, s.size());
    n = static_cast<std::size_t>(
        std::mismatch(names[0].begin(), names[0].begin() + static_cast<long>(n), s.begin()).first - names[0].begin());
  }
  while (n > 0 && !separator(names[0][n - 1])) --n;
  return n;
}

// Bytes every name ends with, starting at a separator, and not reaching into `head`.
std::size_t shared_tail(const std::vector<std::string>& names, std::size_t head) {
  std::size_t n = std::numeric_limits<std::size_t>::max();
  for (const std::string& s : names) {
    n = std::min(n, s.size() - head);
    std::size_t k = 0;
    while (k < n && s[s.size() - 1 - k] == names[0][names[0].size() - 1 - k]) ++k;
    n = k;
  }
  while (n > 0 && !separator(names[0][names[0].size() - n])) --n;
  return n;
}

// `name` less its shared head, and where still too long its shared tail, each marked by "…";
// at most `max_chars` long.
std::string without_shared(const std::string& name, std::size_t head, std::size_t tail, std::size_t max_chars) {
  const std::string core = name.substr(head, name.size() - head - tail);
  if (core.empty()) return display_text(name, max_chars);
  const std::string lead(head > 0 ? kEllipsis : "");
  if (std::string whole_tail = lead + name.substr(head); utf8_length(whole_tail) <= max_chars) return whole_tail;
  std::string out = lead + core + std::string(tail > 0 ? kEllipsis : "");
  if (utf8_length(out) <= max_chars) return out;
  // What differs comes first in the core: its start is kept.
  return lead + display_text(core, std::max<std::size_t>(max_chars - (head > 0 ? 1 : 0), 2));
}

// The words of `text`, a unit kept with its number ("5.60 GiB", "6 s"): a key line never starts
// with a unit.
std::vector<std::string_view> words(std::string_view text) {
  static constexpr std::string_view kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "s", "ms", "min", "h", "%", "%)"};
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find(' ', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view word = text.substr(start, end - start);
    const bool unit = std::find(std::begin(kUnits), std::end(kUnits), word) != std::end(kUnits);
    if (unit && !out.empty()) {
      const char* first = out.back().data();
      out.back() = std::string_view(first, static_cast<std::size_t>(word.data() + word.size() - first));
    } else if (!word.empty()) {
      out.push_back(word);
    }
    start = end + 1;
  }
  return out;
}

}  // namespace

std::vector<std::string> legend_names(const std::vector<std::string>& labels, std::size_t max_chars) {
  std::vector<std::string> names;
  for (const std::string& l : labels) names.push_back(display_text(l, std::numeric_limits<std::size_t>::max()));
  const bool fit =
      std::all_of(names.begin(), names.end(), [&](const std::string& s) { return utf8_length(s) <= max_chars; });
  if (!fit && names.size() > 1) {
    const std::size_t head = shared_head(names);
    const std::size_t tail = shared_tail(names, head);
    for (std::string& s : names) {
      if (utf8_length(s) > max_chars) s = without_shared(s, head, tail, max_chars);
    }
  } else if (!fit) {
    names[0] = display_text(names[0], max_chars);
  }
  mark_equal_names(names, [&](const std::string& name, std::size_t mark_chars) {
    return display_text(name, max_chars > mark_chars + 1 ? max_chars - mark_chars : 1);
  });
  return names;
}

std::vector<std::string> wrap_title(const std::string& title, std::size_t max_chars) {
  constexpr std::string_view kIndent = "  ";
  max_chars = std::max<std::size_t>(max_chars, kIndent.size() + 4);
  std::vector<std::string> lines{""};
  const auto room = [&] { return max_chars - (lines.size() > 1 ? kIndent.size() : 0); };
  for (std::string_view word : words(title)) {
    while (!word.empty()) {
      std::string& line = lines.back();
      const std::size_t used = utf8_length(line) + (line.empty() ? 0 : 1);
      if (used + utf8_length(word) <= room()) {
        line += (line.empty() ? "" : " ") + std::string(word);
        break;
      }
      if (line.empty()) {  // a word longer than a whole line: broken where it must be
        const std::string_view part = utf8_prefix(word, room());
        line = std::string(part);
        word.remove_prefix(part.size());
        if (word.empty()) break;
      }
      lines.emplace_back();
    }
  }
  for (std::size_t i = 1; i < lines.size(); ++i) lines[i] = std::string(kIndent) + lines[i];
  if (lines.size() > 1 && lines.back() == kIndent) lines.pop_back();
  return lines;
}

}  // namespace qprof::plot
