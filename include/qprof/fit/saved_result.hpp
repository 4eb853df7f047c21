// SPDX-License-Identifier: Apache-2.0
// qprof fit's result read back from its JSON (--json; qprof sweep --fit writes one beside each
// trace), so that a later qprof compare --sweep models the limits with the traces' figures.
#pragma once

#include <optional>
#include <string>

#include "qprof/common/failure.hpp"
#include "qprof/common/types.hpp"

namespace qprof::fit {

struct SavedLimits {
  std::optional<Bytes> runs_in;     // findings.smallest_running
  std::optional<Bytes> full_speed;  // findings.full_speed
};

// DIR/NAME.dat → DIR/NAME.fit.json (any other name: NAME.fit.json beside it).
std::string saved_result_path(const std::string& trace_path);

// nullopt where the file is missing; the Failure says what is wrong with a file that is not qprof
// fit's JSON.
Result<std::optional<SavedLimits>> read_saved_limits(const std::string& json_path);

}  // namespace qprof::fit
