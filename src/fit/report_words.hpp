// SPDX-License-Identifier: Apache-2.0
// The figures of qprof fit's text, in one form wherever they are printed.
#pragma once

#include <cstdio>
#include <string>

#include "qprof/common/types.hpp"

namespace qprof::fit {

// Limits in MiB with a decimal: the resolution is a few MiB, and every row reads in one unit.
inline std::string mib(Bytes b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1024.0 * 1024.0));
  return buf;
}

inline std::string fixed(double v, const char* format) {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

}  // namespace qprof::fit
