// SPDX-License-Identifier: Apache-2.0
#include "qprof/fit/stop_signals.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>

namespace qprof::fit {
namespace {

// SIGHUP and SIGQUIT too: a closed terminal or Ctrl-\\ must not leave fit --gpu's MPS daemon behind.
constexpr int kSignals[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT};
constexpr int kCount = sizeof kSignals / sizeof kSignals[0];
// A handler has only these: one search runs in a process at a time.
int g_pipe[2] = {-1, -1};
volatile sig_atomic_t g_stop = 0;

extern "C" void on_signal(int sig) {
  const int saved = errno;
  if (sig != SIGCHLD && g_stop == 0) g_stop = sig;
  const char byte = 0;
  [[maybe_unused]] const ssize_t n = ::write(g_pipe[1], &byte, 1);  // full pipe: already readable
  errno = saved;
}

}  // namespace

StopSignals::StopSignals() {
  if (g_pipe[0] >= 0) throw std::logic_error("StopSignals: one at a time");
  if (::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) throw std::runtime_error("pipe2 failed");
  g_stop = 0;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  for (int i = 0; i < kCount; ++i) sigaction(kSignals[i], &sa, &old_[i]);
}

StopSignals::~StopSignals() {
  for (int i = 0; i < kCount; ++i) sigaction(kSignals[i], &old_[i], nullptr);
  ::close(g_pipe[0]);
  ::close(g_pipe[1]);
  g_pipe[0] = g_pipe[1] = -1;
}

int StopSignals::fd() const { return g_pipe[0]; }

void StopSignals::drain() const {
  char buf[64];
  while (::read(g_pipe[0], buf, sizeof buf) > 0) {
  }
}

int StopSignals::stop_signal() const { return g_stop; }

std::vector<int> StopSignals::handled() { return {std::begin(kSignals), std::end(kSignals)}; }

}  // namespace qprof::fit
