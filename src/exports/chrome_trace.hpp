// SPDX-License-Identifier: Apache-2.0
// The Chrome trace-event JSON export (what Perfetto UI and chrome://tracing open).
#pragma once

#include <iosfwd>
#include <vector>

#include "qprof/exports/export.hpp"

namespace qprof::exports {

void write_chrome_trace(const std::vector<Input>& inputs, Unit unit, std::ostream& out);

}  // namespace qprof::exports
