// SPDX-License-Identifier: Apache-2.0
// The range of the times and sizes a trace line may hold (private to the trace reader): what no
// writer produces is refused as the line's error, so that no command reports a duration of
// 2.5e+96 h, a Perfetto event at 9e+105 µs or a memory figure saturated at 16 EiB. Every reader
// (report, export, compare, plot, peak) parses through here and refuses the same lines.
// The memory figures that are summed or compared are bounded (MEM, CHLD, HWM, PSS, CGROUP,
// CGPEAK, KINDS, GPU use, TORCH, PEAK, a DIR's allocated size); the rest are not (IO bytes, a
// process's virtual size, a DIR's apparent and free sizes, a GPUDEV's total): no sum is made of them.
#pragma once

#include <cstdio>
#include <optional>
#include <string>

#include "qprof/trace/format.hpp"

namespace qprof::trace::detail {

// qprof and mprof write Unix times (seconds since 1970). 1e10 s is 2286-11-20: no clock of a
// machine that records today reads it, and a span that fits is a span every output can say.
inline constexpr Seconds kLatestTime = 1e10;
// 1 EiB: above the memory of any machine, far enough below 2^64 B that sums of ranks and
// processes stay exact.
inline constexpr Bytes kMostBytes = Bytes{1} << 60;

// nullopt for a time in [0, kLatestTime); else the reason, said of `what` on a line of `kind`.
inline std::optional<std::string> time_out_of_range(std::string_view kind, const char* what, Seconds t) {
  if (t >= 0 && t < kLatestTime) return std::nullopt;
  const char* when = t < 0 ? "is before 1970" : t >= kLatestTime ? "is after 2286" : "is not a number";
  char why[160];
  std::snprintf(why, sizeof why, "%.*s: %s %.6g %s: not a Unix time (seconds since 1970)",
                static_cast<int>(kind.size()), kind.data(), what, t, when);
  return std::string(why);
}

inline std::optional<std::string> bytes_out_of_range(std::string_view kind, const char* what, Bytes b) {
  if (b <= kMostBytes) return std::nullopt;
  return std::string(kind) + ": " + what + " is more than 1 EiB: more memory than any machine has";
}

}  // namespace qprof::trace::detail
