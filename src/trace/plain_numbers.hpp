// SPDX-License-Identifier: Apache-2.0
// Fast parsing of the forms qprof and mprof write (private to the trace reader).
#pragma once

#include <cstddef>
#include <string_view>

#include "qprof/trace/format.hpp"

namespace qprof::trace::detail {

// Digits, optionally a point and up to 9 more (%.6f, %.4f): true and the value in `out`; false
// for any other form, which from_chars then parses.
bool plain_decimal(std::string_view w, double& out);

// "MEM <MiB> <time>" in qprof's and mprof's own form, passed to v.mem: true; false (nothing
// done) for any other line. `limit`: the end of the readable buffer around the line, beyond its
// newline, so that a run of digits stops there.
bool fast_mem_line(std::string_view line, const char* limit, Visitor& v);

// The "MEM <MiB> <time>" records (as above, each with its newline) that follow one another from
// `data` on, as long as 64 bytes can be read at each: passed to v.mem, each once the visitor
// was told its line (`line` + 1, then counted in `line`). Returns the bytes they take: 0 where
// the first is of any other form. Most of a trace is parsed here without its newlines being
// looked for first. A visitor's exception leaves `line` at the lines before the refused one.
constexpr std::size_t kMemRecordWindow = 64;
std::size_t fast_mem_records(const char* data, std::size_t size, Visitor& v, std::size_t& line);

}  // namespace qprof::trace::detail
