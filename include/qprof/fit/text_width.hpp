// SPDX-License-Identifier: Apache-2.0
// qprof fit's text lines fitted to the terminal (its width: common's output_columns): a line wider
// than the terminal is broken at spaces and continues indented, so that no line is cut or wrapped
// by the terminal mid-word.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace qprof::fit {

// `line` (no newline) broken into lines of at most `width` columns, each ending in '\n'; the
// continuations start with `indent` spaces. A word wider than a line (a path) stays whole on a
// line of its own, as common's wrap_text keeps it. A width too small for the indent drops the
// indent to 2. (Not common's fit_lines: a unit stays by its number, "104.8 MiB", and the indent is
// the caller's.)
std::string wrap_line(std::string_view line, std::size_t width, std::size_t indent);

// Every line of `text` wrapped, continuing 4 columns right of where the line's own text starts.
std::string wrap_text(std::string_view text, std::size_t width);

}  // namespace qprof::fit
