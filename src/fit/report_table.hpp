// SPDX-License-Identifier: Apache-2.0
// qprof fit's table of runs fitted to the terminal's width: whole rows, never wrapped. Columns
// that do not fit are left out in a set order and named under the table, as the run's stage table
// does; the last column (how a run ended, free text) keeps room for the usual words, and a longer
// text (a driver's error line) is cut rather than more figures left out.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace qprof::fit {

struct TableColumn {
  std::string header;  // with its unit ("time s"): cells are bare numbers
  bool right = true;   // right-aligned (numbers)
  int leave_out = 0;   // 0: always shown; else left out first where lowest, when the table is too wide
  std::vector<std::string> cells;
};

// The table's lines (each ending in '\n') within `width` columns, indented by two, then a line
// naming the columns left out (and "--json has them") and whether the last column was cut.
std::string fitted_table(std::vector<TableColumn> columns, std::size_t width);

}  // namespace qprof::fit
