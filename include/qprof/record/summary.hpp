// SPDX-License-Identifier: Apache-2.0
// The few lines `qprof run` prints on stderr when it is done.
#pragma once

#include <string>

#include "qprof/record/session.hpp"

namespace qprof::record {

std::string format_summary(const RunReport& report);

}  // namespace qprof::record
