// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/signal_relay.hpp"

#include <signal.h>

#include <atomic>
#include <cstring>

namespace qprof::record {
namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};

std::atomic<unsigned> g_pending{0};        // bit per signal number
std::atomic<unsigned> g_from_terminal{0};  // bit per signal number
std::atomic<bool> g_child_event{false};
std::atomic<bool> g_stop{false};
std::atomic<bool> g_stop_from_terminal{false};
std::atomic<bool> g_continued{false};
struct sigaction g_previous[65];
std::atomic<int> g_stop_signal{0};  // the first stop signal since clear_stop_signal()
static_assert(std::atomic<int>::is_always_lock_free, "signal handlers set it");

int wake_signal() { return SIGRTMIN; }

void on_forwarded(int sig, siginfo_t* info, void*) {
  if (info != nullptr && info->si_code == SI_KERNEL)
    g_from_terminal.fetch_or(1u << sig);
  else
    g_from_terminal.fetch_and(~(1u << sig));
  g_pending.fetch_or(1u << sig);
  note_stop_signal(sig);
}

void on_child(int) { g_child_event.store(true); }
void on_stop(int, siginfo_t* info, void*) {
  g_stop_from_terminal.store(info != nullptr && info->si_code == SI_KERNEL);
  g_stop.store(true);
}
void on_continue(int) { g_continued.store(true); }
void on_wake(int) {}

void install(int sig, void (*handler)(int, siginfo_t*, void*), void (*simple)(int)) {
  struct sigaction sa;
  std::memset(&sa, 0, sizeof sa);
  sigemptyset(&sa.sa_mask);
  // No SA_RESTART: the signal must cut the sampler's sleep short.
  if (handler) {
    sa.sa_sigaction = handler;
    sa.sa_flags = SA_SIGINFO;
  } else {
    sa.sa_handler = simple;
  }
  if (sig == SIGCHLD) sa.sa_flags |= SA_NOCLDSTOP;
  sigaction(sig, &sa, &g_previous[sig]);
}

}  // namespace

int received_stop_signal() { return g_stop_signal.load(); }

void clear_stop_signal() { g_stop_signal.store(0); }

void note_stop_signal(int sig) {
  int none = 0;
  g_stop_signal.compare_exchange_strong(none, sig);
}

SignalRelay::SignalRelay() {
  g_pending = 0;
  g_child_event = false;
  for (int sig : kForwarded) {
    struct sigaction old;
    sigaction(sig, nullptr, &old);
    // A signal ignored by whoever started qprof (nohup, a background job) stays ignored, for
    // qprof and for the command, as it would be without qprof.
    if (old.sa_handler == SIG_IGN) continue;
    install(sig, on_forwarded, nullptr);
    installed_.push_back(sig);
    changed_.push_back(sig);
  }
  // Job control: qprof stops itself after giving the terminal back (run loop), so that Ctrl-Z
  // and fg work as they do without it. Not where the caller ignores SIGTSTP (a shell without job
  // control): then no stop was ever wanted.
  struct sigaction tstp;
  sigaction(SIGTSTP, nullptr, &tstp);
  if (tstp.sa_handler != SIG_IGN) {
    install(SIGTSTP, on_stop, nullptr);
    installed_.push_back(SIGTSTP);
    changed_.push_back(SIGTSTP);
  }
  g_stop = g_continued = false;
  install(SIGCONT, nullptr, on_continue);
  installed_.push_back(SIGCONT);
  install(SIGCHLD, nullptr, on_child);
  installed_.push_back(SIGCHLD);
  install(wake_signal(), nullptr, on_wake);
  installed_.push_back(wake_signal());
  changed_.push_back(wake_signal());

  // A closed stderr must not kill qprof before the trace is finished, nor a trace that grows past
  // RLIMIT_FSIZE: the write fails instead (EPIPE, EFBIG), and qprof says so and goes on.
  for (int sig : {SIGPIPE, SIGXFSZ}) {
    struct sigaction old_action;
    sigaction(sig, nullptr, &old_action);
    if (old_action.sa_handler == SIG_IGN) continue;
    struct sigaction ign;
    std::memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(sig, &ign, &g_previous[sig]);
    installed_.push_back(sig);
    changed_.push_back(sig);
  }
}

SignalRelay::~SignalRelay() {
  for (int sig : installed_) sigaction(sig, &g_previous[sig], nullptr);
}

bool SignalRelay::take_forwarded(Received& out) {
  const unsigned pending = g_pending.load();
  for (int sig : kForwarded) {
    const unsigned bit = 1u << sig;
    if (!(pending & bit)) continue;
    g_pending.fetch_and(~bit);
    out.sig = sig;
    out.from_terminal = (g_from_terminal.load() & bit) != 0;
    return true;
  }
  return false;
}

bool SignalRelay::take_child_event() { return g_child_event.exchange(false); }

bool SignalRelay::take_stop(Received& out) {
  if (!g_stop.exchange(false)) return false;
  out.sig = SIGTSTP;
  out.from_terminal = g_stop_from_terminal.load();
  return true;
}

bool SignalRelay::take_continued() { return g_continued.exchange(false); }

void SignalRelay::stop_process() {
  // SIGTSTP's own default action, so that the shell reports the job "Stopped" as for any other;
  // the process stops here (all threads) until SIGCONT. In an orphaned process group the kernel
  // discards it and this returns at once, as a job there would go on.
  struct sigaction dfl;
  std::memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  struct sigaction ours;
  sigaction(SIGTSTP, &dfl, &ours);
  sigset_t tstp;
  sigemptyset(&tstp);
  sigaddset(&tstp, SIGTSTP);
  pthread_sigmask(SIG_UNBLOCK, &tstp, nullptr);
  raise(SIGTSTP);
  sigaction(SIGTSTP, &ours, nullptr);
}

void SignalRelay::wake(pthread_t thread) { pthread_kill(thread, wake_signal()); }

}  // namespace qprof::record
