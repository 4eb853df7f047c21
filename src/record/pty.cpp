// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/pty.hpp"

#include <fcntl.h>
#include <pty.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>

namespace qprof::record {
namespace {

// The handler's view: async-signal-safe ioctls only.
std::atomic<int> g_terminal{-1};
std::atomic<int> g_resize{-1};
struct sigaction g_previous_winch;

void copy_window_size(int from, int to) {
  winsize ws{};
  if (from >= 0 && to >= 0 && ::ioctl(from, TIOCGWINSZ, &ws) == 0) ::ioctl(to, TIOCSWINSZ, &ws);
}

void on_winch(int) {
  const int saved = errno;
  copy_window_size(g_terminal.load(), g_resize.load());
  errno = saved;
}

}  // namespace

Result<std::unique_ptr<StderrPty>> StderrPty::open_like(int terminal) {
  termios modes{};
  winsize ws{};
  if (::tcgetattr(terminal, &modes) != 0 || ::ioctl(terminal, TIOCGWINSZ, &ws) != 0) {
    return Failure{std::string("stderr is not a terminal: ") + std::strerror(errno)};
  }
  // The job's bytes reach the real terminal, which applies its own output processing (\n to
  // \r\n): doing it twice would change them.
  modes.c_oflag &= ~static_cast<tcflag_t>(OPOST);
  int master = -1, slave = -1;
  if (::openpty(&master, &slave, nullptr, &modes, &ws) != 0) {
    return Failure{std::string("openpty: ") + std::strerror(errno)};
  }
  ::fcntl(master, F_SETFD, FD_CLOEXEC);
  ::fcntl(slave, F_SETFD, FD_CLOEXEC);
  const int resize = ::fcntl(master, F_DUPFD_CLOEXEC, 3);
  g_terminal = terminal;
  g_resize = resize;
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  sa.sa_handler = on_winch;
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGWINCH, &sa, &g_previous_winch);
  return std::unique_ptr<StderrPty>(new StderrPty(master, slave, resize));
}

StderrPty::StderrPty(int master, int slave, int resize_fd) : master_(master), slave_(slave), resize_fd_(resize_fd) {}

StderrPty::~StderrPty() {
  ::sigaction(SIGWINCH, &g_previous_winch, nullptr);
  g_resize = -1;
  g_terminal = -1;
  if (resize_fd_ >= 0) ::close(resize_fd_);
  if (master_ >= 0) ::close(master_);
  if (slave_ >= 0) ::close(slave_);
}

int StderrPty::take_master() {
  const int fd = master_;
  master_ = -1;
  return fd;
}

int StderrPty::take_slave() {
  const int fd = slave_;
  slave_ = -1;
  return fd;
}

}  // namespace qprof::record
