// SPDX-License-Identifier: Apache-2.0
#include "qprof/fit/stop_signals.hpp"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cassert>
#include <cerrno>

namespace qprof::fit {
namespace {

// Every signal that ends a search at a terminal or from a job manager (HUP: the terminal closed;
// QUIT: Ctrl-\): each stops the probe, removes its group, and the findings so far are written.
constexpr int kSignals[] = {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP};
static_assert(sizeof kSignals / sizeof kSignals[0] == StopSignals::kHandled);
// A handler has only these: one search runs in a process at a time.
int g_pipe[2] = {-1, -1};
volatile sig_atomic_t g_stop = 0;
std::atomic<std::int64_t> g_stopped_ns{0};
std::atomic<pid_t> g_probe{0};  // the probe running now: stopped and continued with qprof
static_assert(std::atomic<std::int64_t>::is_always_lock_free, "the handler adds to it");

std::int64_t monotonic_now_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);  // async-signal-safe
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

// Ctrl-Z: qprof stops as it would without the handler, and the probe with it (a key at the
// terminal reached it already; a `kill -TSTP` of qprof alone is passed on, as `qprof run` does).
// The time until SIGCONT is counted apart: a probe's duration is the time it could run, so that
// a pause is never taken for slowness.
void stop_and_count(int sig) {
  const pid_t probe = g_probe.load();
  if (probe > 0) ::kill(probe, SIGTSTP);
  struct sigaction dfl {
  }, ours{};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, &ours);
  sigset_t tstp;
  sigemptyset(&tstp);
  sigaddset(&tstp, sig);
  const std::int64_t stopped_at = monotonic_now_ns();
  ::raise(sig);  // pending while this handler blocks it; delivered (a stop) at the unblock
  ::sigprocmask(SIG_UNBLOCK, &tstp, nullptr);
  g_stopped_ns.fetch_add(monotonic_now_ns() - stopped_at);
  if (probe > 0) ::kill(probe, SIGCONT);
  ::sigprocmask(SIG_BLOCK, &tstp, nullptr);  // as the handler was entered: restored at its return
  ::sigaction(sig, &ours, nullptr);
}

extern "C" void on_signal(int sig) {
  const int saved = errno;
  if (sig == SIGTSTP) {
    stop_and_count(sig);
  } else if (sig != SIGCHLD && g_stop == 0) {
    g_stop = sig;
  }
  const char byte = 0;
  [[maybe_unused]] const ssize_t n = ::write(g_pipe[1], &byte, 1);  // full pipe: already readable
  errno = saved;
}

}  // namespace

StopSignals::StopSignals() {
  assert(g_pipe[0] < 0 && "StopSignals: one at a time");
  if (::pipe2(g_pipe, O_CLOEXEC | O_NONBLOCK) != 0) {
    error_ = errno;
    g_pipe[0] = g_pipe[1] = -1;
    return;
  }
  g_stop = 0;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  for (int i = 0; i < kHandled; ++i) {
    struct sigaction now {};
    ::sigaction(kSignals[i], nullptr, &now);
    installed_[i] = false;
    // A signal ignored by whoever started qprof (nohup's SIGHUP, a shell without job control's
    // SIGTSTP) stays ignored, as for any program.
    if (kSignals[i] != SIGCHLD && now.sa_handler == SIG_IGN) continue;
    installed_[i] = ::sigaction(kSignals[i], &sa, &old_[i]) == 0;
  }
}

StopSignals::~StopSignals() {
  if (error_ != 0) return;  // nothing was installed
  for (int i = 0; i < kHandled; ++i) {
    if (installed_[i]) sigaction(kSignals[i], &old_[i], nullptr);
  }
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

void StopSignals::set_probe(pid_t pid) { g_probe.store(pid); }

double StopSignals::stopped_seconds() const { return static_cast<double>(g_stopped_ns.load()) / 1e9; }

namespace {
sigset_t tstp_only() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTSTP);
  return set;
}
}  // namespace

StopSignals::StopsHeld::StopsHeld() {
  const sigset_t set = tstp_only();
  ::pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

// A stop that came meanwhile is delivered here, to the handler, which now knows the probe.
StopSignals::StopsHeld::~StopsHeld() {
  const sigset_t set = tstp_only();
  ::pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

std::vector<int> StopSignals::handled() { return {std::begin(kSignals), std::end(kSignals)}; }

}  // namespace qprof::fit
