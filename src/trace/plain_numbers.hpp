// Fast parsing of the forms qprof and mprof write (private to the trace reader).
#pragma once

#include <string_view>

#include "qprof/trace/format.hpp"

namespace qprof::dat::detail {

// Digits, optionally a point and up to 9 more (%.6f, %.4f): true and the value in `out`; false
// for any other form, which from_chars then parses.
bool plain_decimal(std::string_view w, double& out);

// "MEM <MiB> <time>" in qprof's and mprof's own form, passed to v.mem: true; false (nothing
// done) for any other line. `limit`: the end of the readable buffer around the line, beyond its
// newline, so that a run of digits stops there.
bool fast_mem_line(std::string_view line, const char* limit, Visitor& v);

}  // namespace qprof::dat::detail
