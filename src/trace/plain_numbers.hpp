// Fast parsing of the forms qprof and mprof write (private to the trace reader).
#pragma once

#include <cstddef>
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

// A whole "MEM <MiB> <time>" record (as above, with its newline) at `rec`, where 64 bytes can
// be read: passed to v.mem and its length with the newline returned; 0 (nothing done) for any
// other record. Most of a trace is parsed here without its newline being looked for first.
constexpr std::size_t kMemRecordWindow = 64;
std::size_t fast_mem_record(const char* rec, Visitor& v);

}  // namespace qprof::dat::detail
