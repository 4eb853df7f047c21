// SPDX-License-Identifier: Apache-2.0
// One CSV cell (RFC 4180) from untrusted text, for every CSV qprof writes (report --format csv,
// export --format csv): the one place that quotes, guards against formulas and escapes controls.
#pragma once

#include <string>
#include <string_view>

namespace qprof {

// `text` as one cell:
//  - a cell a spreadsheet would run as a formula (it starts with = + - @, a tab, CR or LF and is
//    not a plain number) gets a leading ' (spreadsheet_cell, OWASP's rule): "-36.2" stays a number;
//  - control characters are shown, never written raw (terminal_text's "\x1b", "\n", "\t"; C1 and
//    bidirectional overrides as "\u009b"), so that a CSV printed to a terminal or read by `cut`
//    keeps one record per line and drives nothing; invalid UTF-8 becomes U+FFFD;
//  - quoted, with quotes doubled, when it holds a comma or a quote or starts or ends with a space
//    (which some readers trim).
std::string csv_cell(std::string_view text);

}  // namespace qprof
