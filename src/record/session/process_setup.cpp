// SPDX-License-Identifier: Apache-2.0
#include "process_setup.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "qprof/common/proc_file.hpp"
#include "qprof/common/proc_parse.hpp"

namespace qprof::record::session {

rlimit raise_files_limit() {
  rlimit as_started{RLIM_INFINITY, RLIM_INFINITY};
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0) {
    as_started = files;
    if (files.rlim_cur < files.rlim_max) {
      files.rlim_cur = files.rlim_max;
      ::setrlimit(RLIMIT_NOFILE, &files);
    }
  }
  return as_started;
}

bool has_controlling_terminal() {
  const int fd = ::open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

Bytes own_peak_rss() {
  // The address space's own high-water mark, which a fork copies into the child: not ru_maxrss,
  // which also holds the image that exec'd qprof (a sanitizer's re-exec, a large parent), and
  // would hide a command that grows past it.
  std::string status;
  if (read_small_file("/proc/self/status", status)) {
    if (const auto hwm = proc::parse_status_vmhwm(status)) return static_cast<Bytes>(*hwm);
  }
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<Bytes>(ru.ru_maxrss) * 1024;
}

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::optional<JobStderr> open_job_stderr(Notices& notices, const Speaker& speaker) {
  JobStderr job;
  if (::isatty(STDERR_FILENO)) {
    Result<std::unique_ptr<StderrPty>> pty = StderrPty::open_like(STDERR_FILENO);
    if (pty)
      job.pty = std::move(*pty);
    else
      notices.warn("the command's stderr is a pipe, not a terminal (" + pty.failure().message + ")");
  }
  if (job.pty) {
    job.read = job.pty->take_master();
    job.write = job.pty->take_slave();
    return job;
  }
  int fds[2] = {-1, -1};
  if (::pipe2(fds, O_CLOEXEC) != 0) {
    speaker.line(std::string("pipe: ") + std::strerror(errno));
    return std::nullopt;
  }
  job.read = fds[0];
  job.write = fds[1];
  return job;
}

}  // namespace qprof::record::session
