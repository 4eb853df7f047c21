// SPDX-License-Identifier: Apache-2.0
// Untrusted text (labels a program printed, command lines, notes, file names) made safe for the
// reader of each output: one place for every output format, built on one UTF-8 validator.
//
//   terminal_text    text, Markdown, summaries: nothing a terminal would execute
//   valid_utf8       JSON, CSV: every byte sequence decodable, nothing else changed
//   yaml_text        YAML: what PyYAML and yaml-cpp accept in a double-quoted scalar
//   spreadsheet_cell CSV: no cell a spreadsheet would read as a formula
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace qprof {

// Length of the valid UTF-8 sequence starting at s[i] (1 for ASCII), or 0 when the bytes there
// are not one: stray continuation bytes, overlong forms (C0 AF is not '/'), UTF-16 surrogates,
// values above U+10FFFF and sequences cut short are all invalid.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i);

// `s` with each byte that does not start a valid UTF-8 sequence replaced by U+FFFD.
std::string valid_utf8(std::string_view s);

// `s` for a terminal: valid UTF-8 (invalid bytes shown as U+FFFD) in which every control
// character is made visible instead of acted upon: C0 controls and DEL as "\x1b" escapes (tab,
// newline, CR as "\t" "\n" "\r"), C1 controls (U+0080–U+009F, the 8-bit CSI included) and the
// bidirectional overrides that reorder what a reader sees (U+202A–U+202E, U+2066–U+2069) as
// "\u009b". A backslash stays as it is.
std::string terminal_text(std::string_view s);
// terminal_text of each line of `s`, its newlines kept: a message of several lines (gnuplot's own
// words after its failure) read as lines, with nothing in them acted upon.
std::string terminal_lines(std::string_view s);

// `s` for a double-quoted YAML scalar written by yaml-cpp: valid UTF-8 (yaml-cpp decodes the
// overlong C0 AF as '/'), and the characters YAML does not allow that yaml-cpp writes raw (DEL,
// U+FFFE, U+FFFF) replaced by U+FFFD. yaml-cpp escapes the other control characters itself.
std::string yaml_text(std::string_view s);

// A CSV cell a spreadsheet shows as text: valid UTF-8, and a cell that starts with = + - @, a
// tab, CR or LF and is not a plain number gets a leading single quote (the OWASP rule against
// CSV injection), so "-12.5" stays a number and "=HYPERLINK(…)" is text.
std::string spreadsheet_cell(std::string_view s);

}  // namespace qprof
