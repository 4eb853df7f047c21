#include "child.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "qprof/common/clock.hpp"

extern char** environ;

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

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

bool Child::start(const std::vector<std::string>& argv, bool with_stdin, std::string& why) {
  stop();
  int out[2] = {-1, -1}, in[2] = {-1, -1};
  if (::pipe2(out, O_CLOEXEC) != 0 || (with_stdin && ::pipe2(in, O_CLOEXEC) != 0)) {
    why = std::string("pipe: ") + std::strerror(errno);
    for (int fd : {out[0], out[1], in[0], in[1]}) {
      if (fd >= 0) ::close(fd);
    }
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawnattr_init(&attr);
  if (with_stdin) {
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  } else {
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  }
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 34)
  // Nothing else of qprof's: a pipe end it kept (the stderr tee's) would never see its EOF.
  posix_spawn_file_actions_addclosefrom_np(&actions, 3);
#endif
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, argv[0].c_str(), &actions, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  ::close(out[1]);
  if (with_stdin) ::close(in[0]);
  if (rc != 0) {
    why = argv[0] + ": " + std::strerror(rc);
    ::close(out[0]);
    if (with_stdin) ::close(in[1]);
    return false;
  }
  pid_ = pid;
  pidfd_ = pidfd_open(pid);
  out_ = out[0];
  in_ = with_stdin ? in[1] : -1;
  ::fcntl(out_, F_SETFL, ::fcntl(out_, F_GETFL) | O_NONBLOCK);
  eof_ = false;
  buf_.clear();
  return true;
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

bool run_capture(const std::vector<std::string>& argv, std::string& out, int timeout_ms, std::string& why) {
  Child c;
  if (!c.start(argv, false, why)) return false;
  out.clear();
  const std::int64_t deadline = monotonic_ns() + std::int64_t{timeout_ms} * 1'000'000;
  while (c.read_lines([&](std::string_view line) {
    out.append(line);
    out.push_back('\n');
  })) {
    if (out.size() > kMaxHelperOutput) {
      why = argv[0] + " printed more than 16 MiB";
      return false;  // ~Child kills it
    }
    const std::int64_t left_ms = (deadline - monotonic_ns()) / 1'000'000;
    if (left_ms <= 0) {
      why = argv[0] + " took longer than " + std::to_string(timeout_ms / 1000) + " s";
      return false;  // ~Child kills it
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
    why = argv[0] + " failed" + (WIFEXITED(status) ? " with status " + std::to_string(WEXITSTATUS(status)) : std::string());
    return false;
  }
  return true;
}

}  // namespace qprof::gpu::detail
