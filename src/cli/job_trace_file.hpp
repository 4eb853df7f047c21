// SPDX-License-Identifier: Apache-2.0
// A job's total (its ranks summed) as a trace of its own in $TMPDIR, unlinked as soon as it is
// made and read through /proc/self/fd: no signal (SIGKILL included) can leave it behind. plot
// --sum draws it; compare reads it for its job row.
#pragma once

#include <string>
#include <vector>

#include "qprof/analysis/job.hpp"
#include "qprof/common/failure.hpp"

namespace qprof::cli {

struct JobTraceFile {
  std::string path;  // /proc/self/fd/N
  int fd = -1;
  JobTraceFile() = default;
  JobTraceFile(const JobTraceFile&) = delete;
  JobTraceFile& operator=(const JobTraceFile&) = delete;
  ~JobTraceFile();
};

// Writes the ranks' sum (analysis::write_job_trace) into `tmp`; `exact`: numbers that read back
// as the doubles summed (trace::Writer::exact_numbers). Failures start with `what`.
Result<void> write_job_file(const std::vector<const trace::Trace*>& ranks, analysis::Align align, bool exact,
                            const std::string& what, JobTraceFile& tmp);

}  // namespace qprof::cli
