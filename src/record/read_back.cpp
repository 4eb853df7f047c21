// SPDX-License-Identifier: Apache-2.0
// The end of a run reads its trace through the descriptor opened with it, never by path.
#include <exception>

#include "qprof/record/session.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::record {
using trace::Trace;

Result<Trace> read_back(const RunReport& report) {
  if (!report.trace_readable_back || !report.trace_read_fd) {
    return Failure{
        trace::ParseError(report.trace_path, 0, "the trace cannot be read back (not a regular file)").what()};
  }
  // The trace reader's exceptions end at its boundary, here.
  try {
    return trace::read_trace_fd(*report.trace_read_fd, report.trace_path);
  } catch (const std::exception& e) {
    return Failure{e.what()};
  }
}

}  // namespace qprof::record
