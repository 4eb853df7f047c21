// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/text_wrap.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>

namespace qprof {

std::size_t output_columns(int fd) {
  winsize ws{};
  if (::isatty(fd) == 1 && ::ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

std::size_t text_columns(std::string_view text) {
  std::size_t columns = 0;
  for (unsigned char c : text) columns += (c & 0xC0) != 0x80;  // continuation bytes add none
  return columns;
}

std::string wrap_text(std::string_view text, std::size_t width, std::size_t first_indent, std::size_t indent) {
  std::string out, line(first_indent, ' ');
  bool line_has_word = false;
  while (!text.empty()) {
    const std::size_t word_end = text.find(' ');
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
// indent; npos where none is (a first word wider than the line: it stays whole).
std::size_t break_at(std::string_view line, std::size_t width) {
  const std::size_t indent = line.find_first_not_of(' ');
  std::size_t columns = 0, best = std::string_view::npos;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if ((static_cast<unsigned char>(line[i]) & 0xC0) == 0x80) continue;
    if (line[i] == ' ' && i > indent && columns <= width) best = i;
    if (++columns > width + 1) break;
  }
  return best;
}

}  // namespace

std::string fit_lines(std::string_view text, std::size_t width) {
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
    const std::size_t cut = break_at(line, width);
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
