// SPDX-License-Identifier: Apache-2.0
// The name a trace goes by in every export (Perfetto's process, CSV's trace column, JSON's label):
// one rule, so that one trace has one name whichever format a user asks for.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "qprof/exports/export.hpp"

namespace qprof::exports {

// Its --label; else a rank of a job's trace (the header's rank) is "rank N (HOST)", as in plot and
// compare; else default_label of its path.
std::string trace_name(const Input& in, std::optional<std::int64_t> rank, const std::string& host);

}  // namespace qprof::exports
