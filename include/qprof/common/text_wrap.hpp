// SPDX-License-Identifier: Apache-2.0
// Text that fits the width it is shown in: the terminal's, or 80 columns when the output is a
// pipe or a file (what a reader of a log or an e-mail sees best), or COLUMNS. Help, messages,
// summaries, tables and notes wrap or narrow with these.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace qprof {

// The width text is written in: the columns of the terminal on `fd`; where `fd` is not one (or
// says 0), COLUMNS where it is set (a whole number, 1 to 10000), else 80.
std::size_t output_columns(int fd);

// Columns that `text` takes on a terminal: one per UTF-8 character (Σ, ², × included).
std::size_t text_columns(std::string_view text);

// A unit that follows a number ("MiB" of "3.22 MiB", "%", "ms,"): a line never breaks between
// them.
bool is_unit_word(std::string_view word);
// Whether `text` may break at its space at byte `at`: not between a number and its unit.
bool may_break_at(std::string_view text, std::size_t at);

// `text` cut to at most `width` columns, its end replaced by "..." where it was longer (ASCII:
// any terminal shows it); never inside a character. Below 3 columns, as many dots as fit.
std::string cut_to_columns(std::string_view text, std::size_t width);

// `text` broken at spaces into lines of at most `width` columns, each ending in '\n': the first
// indented by `first_indent` spaces, the later ones by `indent`. A word wider than the line stays
// whole on a line of its own. A run of spaces counts as one; empty text gives "".
std::string wrap_text(std::string_view text, std::size_t width, std::size_t first_indent = 0, std::size_t indent = 0);

// Each line of `text` that is wider than `width` broken at its last space that fits, the rest on
// lines indented by the line's own indent plus 4 (wrapped at spaces). What fits is kept as it
// is, aligned columns included. Every line of the result ends in '\n'. The first line never
// breaks in its first `whole` bytes (a prefix such as "qprof peak: " stays with its message).
std::string fit_lines(std::string_view text, std::size_t width, std::size_t whole = 0);

}  // namespace qprof
