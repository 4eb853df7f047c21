// SPDX-License-Identifier: Apache-2.0
// The names traces go by in every export (Perfetto's processes, CSV's trace column, JSON's labels):
// the rule of plot's key and compare's rows, so that one trace has one name whichever command or
// format a user asks for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "qprof/exports/export.hpp"

namespace qprof::exports {

// A job's rank and the host it ran on, from a trace's header.
struct TraceIdentity {
  std::optional<std::int64_t> rank;
  std::string host;
};

// One name per input: its --label; else a rank of a job's trace is "rank N (HOST)"; else the file
// name less ".dat", or its path less ".dat" where two files of one name are exported together
// ("d1/x", "d2/x"). Names still alike (one file given twice) end in " #N", N the input's place.
std::vector<std::string> trace_names(const std::vector<Input>& inputs, const std::vector<TraceIdentity>& ids);

}  // namespace qprof::exports
