// SPDX-License-Identifier: Apache-2.0
#include "summary_lines.hpp"

#include <algorithm>

#include "qprof/common/charset.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/common/text_wrap.hpp"

namespace qprof::runs {
namespace {

constexpr std::size_t kNarrowest = 40;
constexpr std::string_view kPrefix = "qprof:   ";
constexpr std::size_t kNameWidth = 15;
constexpr std::size_t kTextColumn = kPrefix.size() + kNameWidth + 1;

}  // namespace

SummaryLines::SummaryLines(std::size_t columns) : columns_(std::max(columns, kNarrowest)) {}

void SummaryLines::command(std::string_view command_utf8) {
  out_ += locale_text(cut_to_columns("qprof: " + terminal_text(std::string(command_utf8)), columns_)) + '\n';
}

void SummaryLines::line(std::string_view what_utf8, std::string_view text_utf8) {
  // In the locale's charset: Σ and the other marks in ASCII where it is not UTF-8.
  const std::string what = locale_text(what_utf8);
  const std::string owned = locale_text(text_utf8);
  const std::string_view text = owned;
  out_ += std::string(kPrefix) + what + std::string(kNameWidth - std::min(kNameWidth, text_columns(what)), ' ') + ' ';
  std::size_t column = kTextColumn;
  bool first = true;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find(' ', pos);
    if (end == std::string_view::npos) end = text.size();
    // Glue the unit that follows a number to it.
    if (end > pos && end < text.size() && !may_break_at(text, end)) {
      end = text.find(' ', end + 1);
      if (end == std::string_view::npos) end = text.size();
    }
    const std::string_view word = text.substr(pos, end - pos);
    pos = end + 1;
    if (word.empty()) {
      if (!first) {  // the two spaces after a figure are kept
        out_ += ' ';
        ++column;
      }
      continue;
    }
    if (!first && column + 1 + text_columns(word) > columns_) {
      out_ += '\n' + std::string(kTextColumn, ' ');
      column = kTextColumn;
    } else if (!first) {
      out_ += ' ';
      ++column;
    }
    out_ += word;
    column += text_columns(word);
    first = false;
  }
  out_ += '\n';
}

}  // namespace qprof::runs
