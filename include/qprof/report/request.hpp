// SPDX-License-Identifier: Apache-2.0
// A trace's OOM kills and the memory request to paste, in `qprof report` (facts: every format
// carries them) and `qprof report --request` (the four forms alone).
#pragma once

#include <optional>

#include "qprof/common/request.hpp"
#include "qprof/report/report.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof::report {

// From the trace's footprint peak plus `margin`; after an OOM kill the trace records, grown as
// VPA grows it from the limit killed at (the kill's, else the header's limit). nullopt where the
// trace has no footprint (an mprof trace).
std::optional<MemoryRequest> trace_request(const trace::Trace& trace, double margin);
// The OOM kills first among the facts (after the trace and command), then the request's facts
// at the end: request, request_margin, request_rule and one per form (slurm, kubernetes, docker,
// systemd).
void add_oom_and_request_facts(Document& doc, const trace::Trace& trace, double margin);
// --request --format json: the request's facts alone, with the keys the report's JSON gives them.
Document request_document(const MemoryRequest& request);

}  // namespace qprof::report
