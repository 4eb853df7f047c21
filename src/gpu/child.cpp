// SPDX-License-Identifier: Apache-2.0
#include "child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <boost/process/args.hpp>
#include <boost/process/child.hpp>
#include <boost/process/error.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/extend.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "qprof/common/child_process.hpp"
#include "qprof/common/clock.hpp"

namespace bp = boost::process;

namespace qprof::gpu::detail {
namespace {

int pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  errno = ENOSYS;
  return -1;
#endif
}

int pidfd_signal(int pidfd, int sig) {
#ifdef SYS_pidfd_send_signal
  return static_cast<int>(::syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0));
#else
  (void)pidfd;
  (void)sig;
  errno = ENOSYS;
  return -1;
#endif
}

// The signals a helper gets with their default disposition, whatever qprof did with them: it
// dies of SIGPIPE when qprof is gone, and of the signals a shell would send it.
constexpr std::array<int, 6> kDefaultSignals = {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD};

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

Result<void> Child::start(const std::vector<std::string>& argv, bool with_stdin) {
  stop();
  // Every descriptor is made close-on-exec here, before fork: another of qprof's threads may
  // start a program meanwhile, which must not inherit them.
  int out[2] = {-1, -1}, in[2] = {-1, -1};
  const int null_in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  const int null_out = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  auto close_all = [&] {
    for (int fd : {out[0], out[1], in[0], in[1], null_in, null_out}) {
      if (fd >= 0) ::close(fd);
    }
  };
  if (null_in < 0 || null_out < 0 || ::pipe2(out, O_CLOEXEC) != 0 || (with_stdin && ::pipe2(in, O_CLOEXEC) != 0)) {
    Failure why{std::string(null_in < 0 || null_out < 0 ? "/dev/null: " : "pipe: ") + std::strerror(errno)};
    close_all();
    return why;
  }
  const int stdin_fd = with_stdin ? in[0] : null_in;
  Result<std::unique_ptr<child_process::ExecReport>> opened = child_process::ExecReport::open();
  if (!opened) {
    close_all();
    return opened.failure();
  }
  child_process::ExecReport* report = opened->get();
  constexpr int kSetUp = child_process::kExec + 1;
  std::vector<std::string> args(argv.begin() + 1, argv.end());
  bp::child child(
      bp::exe = argv[0], bp::args = args, bp::ignore_error, *report, bp::extend::on_exec_setup = [&](auto&) {
        child_process::default_signals(kDefaultSignals);
        if (::dup2(stdin_fd, 0) < 0 || ::dup2(out[1], 1) < 0 || ::dup2(null_out, 2) < 0 ||
            // Nothing else of qprof's: a pipe end it kept (the stderr tee's) would
            // never see its EOF.
            !child_process::close_from(3, report->child_fd()) || ::setpgid(0, 0) != 0) {
          report->fail(kSetUp, errno);
        }
      });
  const pid_t pid = child.id();
  child.detach();  // stop() reaps it, or the run loop's waitpid(-1) does
  const std::optional<child_process::Failure> failure = report->wait();
  ::close(out[1]);
  out[1] = -1;
  if (with_stdin) {
    ::close(in[0]);
    in[0] = -1;
  }
  if (failure) {
    if (child.valid()) {
      while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
      }
    }
    close_all();
    return Failure{argv[0] + ": " + std::strerror(failure->error)};
  }
  ::close(null_in);
  ::close(null_out);
  pid_ = pid;
  pidfd_ = pidfd_open(pid);
  out_ = out[0];
  in_ = with_stdin ? in[1] : -1;
  ::fcntl(out_, F_SETFL, ::fcntl(out_, F_GETFL) | O_NONBLOCK);
  eof_ = false;
  buf_.clear();
  return {};
}

bool Child::write(std::string_view s) {
  while (!s.empty() && in_ >= 0) {
    const ssize_t n = ::write(in_, s.data(), s.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    s.remove_prefix(static_cast<std::size_t>(n));
  }
  return s.empty();
}

bool Child::fill() {
  if (out_ < 0 || eof_) return false;
  char chunk[4096];
  for (;;) {
    const ssize_t n = ::read(out_, chunk, sizeof chunk);
    if (n > 0) {
      buf_.append(chunk, static_cast<std::size_t>(n));
      if (buf_.size() > (1u << 20)) buf_.erase(0, buf_.size() - (1u << 16));  // a runaway line
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) eof_ = true;
    return true;  // EAGAIN: all there is for now
  }
}

void Child::stop() {
  close_fd(in_);
  close_fd(out_);
  if (pid_ <= 0) return;
  // Signal only a process that is surely ours: through the pidfd, or while waitpid still knows it.
  auto alive_and_ours = [this] {
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    return r == 0;  // r == pid: reaped now; -1 (ECHILD): reaped by someone else
  };
  auto signal = [&](int sig) {
    if (pidfd_ >= 0) {
      pidfd_signal(pidfd_, sig);
    } else if (alive_and_ours()) {
      ::kill(pid_, sig);
    }
  };
  bool gone = !alive_and_ours();
  if (!gone) {
    signal(SIGTERM);
    const std::int64_t deadline = monotonic_ns() + 1'000'000'000;
    while (!(gone = !alive_and_ours()) && monotonic_ns() < deadline) {
      if (pidfd_ >= 0) {
        pollfd p{pidfd_, POLLIN, 0};
        ::poll(&p, 1, 20);
      } else {
        ::usleep(5000);
      }
    }
    if (!gone) {
      signal(SIGKILL);
      if (pidfd_ >= 0) {
        pollfd p{pidfd_, POLLIN, 0};
        ::poll(&p, 1, 1000);
      }
      alive_and_ours();
    }
  }
  close_fd(pidfd_);
  pid_ = -1;
}

Result<std::string> run_capture(const std::vector<std::string>& argv, int timeout_ms) {
  Child c;
  if (Result<void> started = c.start(argv, false); !started) return started.failure();
  std::string out;
  const std::int64_t deadline = monotonic_ns() + std::int64_t{timeout_ms} * 1'000'000;
  while (c.read_lines([&](std::string_view line) {
    out.append(line);
    out.push_back('\n');
  })) {
    if (out.size() > kMaxHelperOutput) {
      return Failure{argv[0] + " printed more than 16 MiB"};  // ~Child kills it
    }
    const std::int64_t left_ms = (deadline - monotonic_ns()) / 1'000'000;
    if (left_ms <= 0) {
      return Failure{argv[0] + " took longer than " + std::to_string(timeout_ms / 1000) + " s"};  // ~Child kills it
    }
    pollfd p{c.out_fd(), POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(left_ms));
  }
  c.read_lines([&](std::string_view line) {
    out.append(line);
    out.push_back('\n');
  });
  // Its status: a non-zero exit with no output is a failure.
  const pid_t pid = c.pid();
  int status = 0;
  pid_t r;
  do {
    r = ::waitpid(pid, &status, 0);
  } while (r < 0 && errno == EINTR);
  if (r == pid && !(WIFEXITED(status) && WEXITSTATUS(status) == 0) && out.empty()) {
    return Failure{argv[0] + " failed" +
                   (WIFEXITED(status) ? " with status " + std::to_string(WEXITSTATUS(status)) : std::string())};
  }
  return out;
}

}  // namespace qprof::gpu::detail
