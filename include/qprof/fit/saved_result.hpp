// SPDX-License-Identifier: Apache-2.0
// qprof fit's result read back from its JSON (--json; qprof sweep --fit writes one beside each
// trace), so that a later qprof compare --sweep models the limits with the traces' figures.
#pragma once

#include <optional>
#include <string>

#include "qprof/common/types.hpp"

namespace qprof::fit {

struct SavedLimits {
  std::optional<Bytes> runs_in;     // findings.smallest_running
  std::optional<Bytes> full_speed;  // findings.full_speed
};

// DIR/NAME.dat → DIR/NAME.fit.json (any other name: NAME.fit.json beside it).
std::string saved_result_path(const std::string& trace_path);

// nullopt where the file is missing (why empty) or is not qprof fit's JSON (why says what is wrong).
std::optional<SavedLimits> read_saved_limits(const std::string& json_path, std::string& why);

}  // namespace qprof::fit
