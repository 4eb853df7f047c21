// Text that reaches gnuplot. Labels, titles, commands and file names come from other people's
// programs, so nothing of them may ever be read by gnuplot as code.
//
// gnuplot 5.4 expands backquotes (`cmd`, a shell command) inside double-quoted strings and
// processes backslash escapes there; inside single-quoted strings it expands nothing: no
// backquote, no @macro, no backslash escape, only '' for one quote (checked against the real
// gnuplot by the tests). So every string qprof writes into a script is a single-quoted literal
// made by gp_string(), and a newline, which would end the command, never reaches it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace qprof::plot {

// `text` as a gnuplot single-quoted string literal, quotes included: ' doubled, every control
// character replaced (newline, tab and carriage return by a space, the others by U+FFFD), invalid
// UTF-8 replaced by U+FFFD. The result holds no newline and no byte below 0x20.
std::string gp_string(std::string_view text);

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
