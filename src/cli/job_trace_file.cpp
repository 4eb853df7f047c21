// SPDX-License-Identifier: Apache-2.0
#include "job_trace_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "qprof/common/temporary_trace.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::cli {

JobTraceFile::~JobTraceFile() {
  if (fd >= 0) ::close(fd);
}

Result<void> write_job_file(const std::vector<const trace::Trace*>& ranks, analysis::Align align, bool exact,
                            const std::string& what, JobTraceFile& tmp) {
  Result<TemporaryTrace> created = create_temporary_trace("qprof-job");
  if (!created) return Failure{what + created.failure().message};
  // Unlinked at once and read back through a descriptor: a Ctrl-C leaves no file behind.
  ::unlink(created->path.c_str());
  tmp.fd = ::fcntl(created->fd, F_DUPFD_CLOEXEC, 3);
  if (tmp.fd < 0) {
    ::close(created->fd);
    return Failure{what + "cannot keep a temporary trace open: " + std::string(std::strerror(errno))};
  }
  tmp.path = "/proc/self/fd/" + std::to_string(tmp.fd);
  trace::Writer out(created->fd, created->path);
  if (exact) out.exact_numbers();
  analysis::write_job_trace(ranks, align, out);
  if (!out.close()) return Failure{what + out.error()};
  return {};
}

}  // namespace qprof::cli
