// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace qprof::child_process {
namespace {

// `fd` moved above 2 when it is one of them (qprof started with a standard descriptor closed):
// the child's stdio is set up on 0–2, and must not land on the report pipe.
int above_stdio(int fd) {
  if (fd > 2) return fd;
  const int high = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
  const int e = errno;
  ::close(fd);
  errno = e;
  return high;
}

bool close_range(unsigned first, unsigned last) noexcept {
  if (first > last) return true;
#ifdef SYS_close_range
  return ::syscall(SYS_close_range, first, last, 0) == 0;
#else
  errno = ENOSYS;
  return false;
#endif
}

}  // namespace

qprof::Result<std::unique_ptr<ExecReport>> ExecReport::open() {
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) return qprof::Failure{std::string("pipe: ") + std::strerror(errno)};
  const int read = above_stdio(p[0]);
  const int write = above_stdio(p[1]);
  if (read < 0 || write < 0) {
    const int e = errno;
    for (int fd : {read, write}) {
      if (fd >= 0) ::close(fd);
    }
    return qprof::Failure{std::string("fcntl: ") + std::strerror(e)};
  }
  return std::unique_ptr<ExecReport>(new ExecReport(read, write));
}

ExecReport::~ExecReport() {
  if (read_ >= 0) ::close(read_);
  if (write_ >= 0) ::close(write_);
}

void ExecReport::fail(int step, int error) const noexcept {
  const Failure failure{step, error};
  [[maybe_unused]] const ssize_t n = ::write(write_, &failure, sizeof failure);
  ::_exit(127);
}

std::optional<Failure> ExecReport::wait() {
  ::close(write_);  // the child's copy is the one left: closed by its exec
  write_ = -1;
  if (fork_error_ != 0) return Failure{kExec, fork_error_};
  Failure failure;
  ssize_t n;
  while ((n = ::read(read_, &failure, sizeof failure)) < 0 && errno == EINTR) {
  }
  ::close(read_);
  read_ = -1;
  if (n == static_cast<ssize_t>(sizeof failure)) return failure;
  return std::nullopt;
}

namespace {
// Whether SIGPIPE was at its default when qprof started (a caller that ignores it, nohup's or a
// Python's children's, keeps it ignored for the command, as without qprof).
volatile sig_atomic_t g_sigpipe_was_default = 1;
}  // namespace

void ignore_sigpipe_in_qprof() noexcept {
  struct sigaction old {};
  sigaction(SIGPIPE, nullptr, &old);
  g_sigpipe_was_default = old.sa_handler == SIG_DFL;
  signal(SIGPIPE, SIG_IGN);
}

void restore_sigpipe() noexcept {
  if (g_sigpipe_was_default) signal(SIGPIPE, SIG_DFL);
}

void default_signals(std::span<const int> signals) noexcept {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : signals) signal(sig, SIG_DFL);
  restore_sigpipe();
}

bool close_from(int first, int keep) noexcept {
  if (keep < first) return close_range(static_cast<unsigned>(first), ~0U);
  return close_range(static_cast<unsigned>(first), static_cast<unsigned>(keep) - 1) &&
         close_range(static_cast<unsigned>(keep) + 1, ~0U);
}

}  // namespace qprof::child_process
