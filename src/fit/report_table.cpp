// SPDX-License-Identifier: Apache-2.0
#include "report_table.hpp"

#include <algorithm>
#include <utility>

#include "qprof/common/text_wrap.hpp"
#include "qprof/fit/text_width.hpp"

namespace qprof::fit {
namespace {

constexpr std::size_t kIndent = 2;
constexpr std::size_t kLastColumnWanted = 26;

// Right-aligned numbers stand apart by their own padding: one space before them, two before text.
std::size_t gap_before(const TableColumn& c) { return c.right ? 1 : 2; }

std::size_t column_width(const TableColumn& c) {
  std::size_t w = text_columns(c.header);
  for (const std::string& cell : c.cells) w = std::max(w, text_columns(cell));
  return w;
}

std::string padded(const std::string& s, std::size_t width, bool right) {
  const std::string fill(width > text_columns(s) ? width - text_columns(s) : 0, ' ');
  return right ? fill + s : s + fill;
}

// Where the last column starts: the indent, every other column and the gaps.
std::size_t last_start(const std::vector<TableColumn>& columns) {
  std::size_t w = kIndent;
  for (std::size_t i = 0; i + 1 < columns.size(); ++i) w += column_width(columns[i]) + gap_before(columns[i + 1]);
  return w;
}

std::string line_of(const std::vector<TableColumn>& columns, std::size_t row) {
  std::string line(kIndent, ' ');
  for (std::size_t c = 0; c < columns.size(); ++c) {
    const TableColumn& col = columns[c];
    if (c > 0) line += std::string(gap_before(col), ' ');
    const std::string& text = row == 0 ? col.header : col.cells[row - 1];
    line += c + 1 < columns.size() ? padded(text, column_width(col), col.right) : text;
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line + "\n";
}

// Named, so that no one takes a missing column for a figure fit lacks.
std::string left_out_note(std::vector<std::pair<std::size_t, std::string>> left_out, const std::string& cut_header,
                          std::size_t width) {
  std::sort(left_out.begin(), left_out.end());
  std::string note;
  if (!left_out.empty()) {
    note = "left out to fit " + std::to_string(width) + " columns: ";
    for (std::size_t i = 0; i < left_out.size(); ++i) note += (i ? ", " : "") + left_out[i].second;
  }
  if (!cut_header.empty()) note += std::string(note.empty() ? "" : "; ") + "\"" + cut_header + "\" cut to fit";
  if (note.empty()) return "";
  const bool several = left_out.size() + (cut_header.empty() ? 0 : 1) > 1;
  return wrap_line("  " + note + "; qprof fit --json has " + (several ? "them" : "it"), width, 4);
}

}  // namespace

std::string fitted_table(std::vector<TableColumn> columns, std::size_t width) {
  if (columns.empty()) return "";
  // Columns go, the lowest leave_out first (ties: the later column), until the last one has room.
  std::vector<std::pair<std::size_t, std::string>> left_out;  // place in the table as given, header
  std::vector<std::size_t> place(columns.size());
  for (std::size_t i = 0; i < place.size(); ++i) place[i] = i;
  // Figures go for the last column's text only as far as it needs to say how runs end most
  // often ("exit status 1, no OOM kill"): a driver's long error line is cut instead.
  const std::size_t wanted = std::min(column_width(columns.back()), kLastColumnWanted);
  while (last_start(columns) + wanted > width) {
    std::size_t pick = columns.size();
    for (std::size_t i = 0; i + 1 < columns.size(); ++i) {
      if (columns[i].leave_out > 0 && (pick == columns.size() || columns[i].leave_out <= columns[pick].leave_out)) {
        pick = i;
      }
    }
    if (pick == columns.size()) break;
    left_out.emplace_back(place[pick], columns[pick].header);
    columns.erase(columns.begin() + static_cast<long>(pick));
    place.erase(place.begin() + static_cast<long>(pick));
  }
  const std::size_t room = width > last_start(columns) + 1 ? width - last_start(columns) : 1;
  bool cut_last = false;
  for (std::string& cell : columns.back().cells) {
    cut_last = cut_last || text_columns(cell) > room;
    cell = cut_to_columns(cell, room);
  }

  std::string out;
  for (std::size_t r = 0; r <= columns.front().cells.size(); ++r) out += line_of(columns, r);
  return out + left_out_note(left_out, cut_last ? columns.back().header : "", width);
}

}  // namespace qprof::fit
