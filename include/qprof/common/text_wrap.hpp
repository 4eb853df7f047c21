// SPDX-License-Identifier: Apache-2.0
// Text that fits the width it is shown in: the terminal's, or 80 columns when the output is a
// pipe or a file (what a reader of a log or an e-mail sees best). --help, fit and the notes of
// report wrap with these.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace qprof {

// The columns of the terminal on `fd`, or 80 when `fd` is not one (or says 0).
std::size_t output_columns(int fd);

// Columns that `text` takes on a terminal: one per UTF-8 character (Σ, ², × included).
std::size_t text_columns(std::string_view text);

// `text` broken at spaces into lines of at most `width` columns, each ending in '\n': the first
// indented by `first_indent` spaces, the later ones by `indent`. A word wider than the line stays
// whole on a line of its own. A run of spaces counts as one; empty text gives "".
std::string wrap_text(std::string_view text, std::size_t width, std::size_t first_indent = 0, std::size_t indent = 0);

// Each line of `text` that is wider than `width` broken at its last space that fits, the rest on
// lines indented by the line's own indent plus 4 (wrapped at spaces). What fits is kept as it
// is, aligned columns included. Every line of the result ends in '\n'.
std::string fit_lines(std::string_view text, std::size_t width);

}  // namespace qprof
