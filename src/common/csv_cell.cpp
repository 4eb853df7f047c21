// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/csv_cell.hpp"

#include "qprof/common/safe_text.hpp"

namespace qprof {

std::string csv_cell(std::string_view text) {
  // The guard looks at the text as given: a leading tab is a formula's way in even though it is
  // then written as "\t".
  const std::string cell = terminal_text(spreadsheet_cell(text));
  const bool quoted = cell.find_first_of(",\"\r\n") != std::string::npos ||
                      (!cell.empty() && (cell.front() == ' ' || cell.back() == ' '));
  if (!quoted) return cell;
  std::string out = "\"";
  for (char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

}  // namespace qprof
