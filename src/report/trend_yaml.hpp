// SPDX-License-Identifier: Apache-2.0
// Inside the report module: the run's trends under the YAML report's `qprof:` map.
#pragma once

#include <yaml-cpp/yaml.h>

#include "qprof/trace/trace.hpp"

namespace qprof::report::detail {

// trend: {rss: {slope_mb_per_min, r2, from_secs, to_secs, samples, significant}, pss: {…}}
// (mb: MiB, as everywhere in the report); nothing when no series can be fitted.
void emit_trends(YAML::Emitter& e, const trace::Trace& trace);

}  // namespace qprof::report::detail
