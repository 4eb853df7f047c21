// SPDX-License-Identifier: Apache-2.0
// One trace line of any kind into a Visitor (private to the trace reader, reader.cpp, which feeds
// it lines and adds FILE:LINE to what it refuses).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "qprof/trace/format.hpp"

namespace qprof::trace::detail {

// Thrown by field parsers; the line loop adds FILE:LINE.
struct LineError {
  std::string reason;
};

// What a line's checks need of the lines before it in the same file. One lives as long as its
// file's reading (one LineFeeder per file, as PieceReader keeps): a file split across two would
// let a marker out of order through, and the readers would no longer refuse the same lines.
struct LinesBefore {
  // Markers are written as they happen: one timed before the marker above it is a broken line
  // (its stage would end before it starts).
  std::optional<Seconds> last_mark;
};

// Parses a line (a record of any kind but the fast MEM forms, plain_numbers.hpp) and passes it
// to the visitor; unknown all-capitals kinds are skipped. Throws LineError.
void parse_line(std::string_view line, Visitor& v, LinesBefore& before);

}  // namespace qprof::trace::detail
