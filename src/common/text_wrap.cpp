// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/text_wrap.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <cstring>

namespace qprof {
namespace {

// A COLUMNS wider than any screen is a mistake, not a width.
constexpr std::size_t kMostColumns = 10000;

}  // namespace

std::size_t output_columns(int fd) {
  // A terminal's own width first: it follows a resize, where a COLUMNS exported once would not.
  winsize ws{};
  if (::isatty(fd) == 1 && ::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  // Else COLUMNS where it is set: a log or a script that wants another width than 80 asks so.
  if (const char* env = std::getenv("COLUMNS"); env && *env) {
    std::size_t columns = 0;
    const auto [end, error] = std::from_chars(env, env + std::strlen(env), columns);
    if (error == std::errc{} && *end == '\0' && columns > 0 && columns <= kMostColumns) return columns;
  }
  return 80;
}

std::size_t text_columns(std::string_view text) {
  std::size_t columns = 0;
  for (unsigned char c : text) columns += (c & 0xC0) != 0x80;  // continuation bytes add none
  return columns;
}

bool is_unit_word(std::string_view word) {
  static constexpr std::string_view kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB",     "ms",
                                                "s", "%",   "min", "h",   "us",  "\u00b5s", "ns"};
  for (std::string_view u : kUnits) {
    if (word == u || (word.size() > u.size() && word.substr(0, u.size()) == u &&
                      !std::isalnum(static_cast<unsigned char>(word[u.size()])))) {
      return true;
    }
  }
  return false;
}

std::string cut_to_columns(std::string_view text, std::size_t width) {
  if (text_columns(text) <= width) return std::string(text);
  const std::size_t keep = width > 3 ? width - 3 : 0;
  std::size_t bytes = 0;
  for (std::size_t columns = 0; bytes < text.size() && columns < keep; ++columns) {
    ++bytes;
    while (bytes < text.size() && (static_cast<unsigned char>(text[bytes]) & 0xC0) == 0x80) ++bytes;
  }
  return std::string(text.substr(0, bytes)) + std::string("...").substr(0, std::min<std::size_t>(width, 3));
}

bool may_break_at(std::string_view line, std::size_t at) {
  if (at == 0 || !std::isdigit(static_cast<unsigned char>(line[at - 1]))) return true;
  const std::string_view next = line.substr(at + 1, line.find(' ', at + 1) - (at + 1));
  return !is_unit_word(next);
}

std::string wrap_text(std::string_view text, std::size_t width, std::size_t first_indent, std::size_t indent) {
  std::string out, line(first_indent, ' ');
  bool line_has_word = false;
  while (!text.empty()) {
    // A word, with the unit that follows it where it is a number ("3.22 MiB").
    std::size_t word_end = text.find(' ');
    while (word_end != std::string_view::npos && !may_break_at(text, word_end)) word_end = text.find(' ', word_end + 1);
    const std::string_view word = text.substr(0, word_end);
    text.remove_prefix(word_end == std::string_view::npos ? text.size() : word_end + 1);
    if (word.empty()) continue;
    if (line_has_word && text_columns(line) + 1 + text_columns(word) > width) {
      out += line + "\n";
      line.assign(indent, ' ');
      line_has_word = false;
    }
    if (line_has_word) line += ' ';
    line += word;
    line_has_word = true;
  }
  if (line_has_word) out += line + "\n";
  return out;
}

namespace {

// The byte where `line` breaks to fit `width` columns: its last space inside them, after its
// indent and its first `whole` bytes, never between a number and its unit. Where none is (a
// first word wider than the line), the first space after that word: the word stays whole on a
// line of its own. npos: the line has no space to break at.
std::size_t break_at(std::string_view line, std::size_t width, std::size_t whole) {
  const std::size_t indent = std::max(line.find_first_not_of(' '), whole);
  std::size_t columns = 0, best = std::string_view::npos;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if ((static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) continue;
    if (line[i] == ' ' && i > indent && may_break_at(line, i)) {
      if (columns <= width || best == std::string_view::npos) best = i;
      if (columns > width) break;
    }
    ++columns;
  }
  return best;
}

}  // namespace

std::string fit_lines(std::string_view text, std::size_t width, std::size_t whole) {
  std::string out;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (text_columns(line) <= width) {
      out += std::string(line) + "\n";
      continue;
    }
    const std::size_t indent = std::min(line.find_first_not_of(' '), width / 2) + 4;
    const std::size_t cut = break_at(line, width, out.empty() ? whole : 0);
    if (cut == std::string_view::npos) {
      out += std::string(line) + "\n";
      continue;
    }
    std::string head(line.substr(0, cut));
    while (!head.empty() && head.back() == ' ') head.pop_back();
    out += head + "\n" + wrap_text(line.substr(cut + 1), width, indent, indent);
  }
  return out;
}

}  // namespace qprof
