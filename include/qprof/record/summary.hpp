// SPDX-License-Identifier: Apache-2.0
// The few lines `qprof run` prints on stderr when it is done.
#pragma once

#include <optional>
#include <string>

#include "qprof/record/session.hpp"

namespace qprof::record {

// The request to paste for a scheduler (Slurm's --mem=…, with its rule); nullopt without a
// footprint.
std::optional<std::string> request_text(const RunReport& report);
// Every figure of the run (-v).
std::string format_summary(const RunReport& report);
// The default: the footprint, the GPU peak, how the command ended, Σ RSS as mprof counts it,
// one line of what to act on, and the trace; at most about 8 lines.
std::string format_short_summary(const RunReport& report);

}  // namespace qprof::record
