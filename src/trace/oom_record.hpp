// SPDX-License-Identifier: Apache-2.0
// The OOM line, "OOM <t> key=value…": a member of the tree killed by the kernel's OOM killer.
// Keys: pid, name, role, source, scope, limit, held, tree, stage; those qprof did not learn are
// left out, and a reader ignores keys it does not know (a newer writer's).
#pragma once

#include <string>
#include <string_view>

#include "qprof/trace/trace.hpp"

namespace qprof::trace {

// The key=value fields after the time, values escaped (format.hpp).
std::string oom_record_fields(const OomKill& kill);
// The fields after the kind: "<t> key=value…". Throws BadRecord (FILE:LINE from the reader) on a
// malformed one.
OomKill parse_oom_record(std::string_view fields);

}  // namespace qprof::trace
