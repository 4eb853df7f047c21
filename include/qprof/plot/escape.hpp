// SPDX-License-Identifier: Apache-2.0
// Text that reaches gnuplot. Labels, titles, commands and file names come from other people's
// programs, so nothing of them may ever be read by gnuplot as code.
//
// What gnuplot 5.4 does with a line (checked against the real gnuplot by the tests): before it
// parses a command it replaces `cmd` outside single quotes by the output of a shell command, and
// @name outside quotes by a macro. Its single-quoted strings would be safe, but their only escape,
// a doubled quote, is misread when quotes follow each other (three quotes in a row are an error).
// So every string qprof writes is a double-quoted literal in which the backslash and the double
// quote are escaped, and the backquote and '@' are written as octal escapes (backslash 140 and
// 100): the raw line never holds either character, and gnuplot's string parser turns them back
// into characters only after substitution had its chance. A newline, which would end the command,
// never reaches it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace qprof::plot {

// `text` as a gnuplot double-quoted string literal, quotes included (see above). Every control
// character is replaced (newline, tab and carriage return by a space, the others by U+FFFD), and
// invalid UTF-8 by U+FFFD. The result holds no newline, no byte below 0x20, no backquote, no '@'.
std::string gp_string(std::string_view text);
// A number as gnuplot reads it back: ten significant digits, C locale.
std::string gp_number(double v);

// Valid UTF-8 without control characters (as gp_string does), leading and trailing blanks
// trimmed, cut to at most `max_chars` code points with "…" at the end when it was longer.
std::string display_text(std::string_view text, std::size_t max_chars = 200);

// Code points in valid UTF-8 text.
std::size_t utf8_length(std::string_view text);
// The first `n` code points of valid UTF-8 text.
std::string_view utf8_prefix(std::string_view text, std::size_t n);

// Estimated width of a line of text in ems: DejaVu Sans advances for ASCII (the face behind
// fontconfig's "Sans" on Debian), an em for anything else. Used to keep labels apart.
double text_width_em(std::string_view text);

}  // namespace qprof::plot
