// SPDX-License-Identifier: Apache-2.0
// The figures of qprof fit's text, in one form wherever they are printed.
#pragma once

#include <optional>
#include <string>

#include "qprof/common/number_text.hpp"
#include "qprof/common/types.hpp"

namespace qprof::fit {

// Limits in MiB with a decimal: the resolution is a few MiB, and every row reads in one unit.
inline std::string mib(Bytes b) { return printf_number("%.1f MiB", static_cast<double>(b) / (1024.0 * 1024.0)); }

// The argument order of fit's calls; the formatting is common's (never cut at a buffer's end).
inline std::string fixed(double v, const char* format) { return printf_number(format, v); }

inline std::string opt_mib(const std::optional<Bytes>& b) { return b ? mib(*b) : "?"; }

}  // namespace qprof::fit
