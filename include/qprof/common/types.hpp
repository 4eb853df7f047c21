// SPDX-License-Identifier: Apache-2.0
// The two quantities every layer speaks in. They live below the trace model so that /proc
// parsing, units and clocks need nothing of the trace.
#pragma once

#include <cstdint>

namespace qprof {

// Times are Unix seconds. qprof derives them from the monotonic clock plus one wall-clock reading
// at the start, so they never jump backwards with the wall clock.
using Seconds = double;
using Bytes = std::uint64_t;

}  // namespace qprof
