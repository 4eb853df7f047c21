// SPDX-License-Identifier: Apache-2.0
#include "qprof/runs/stop_latch.hpp"

#include "qprof/record/signal_relay.hpp"

namespace qprof::runs {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT};
static_assert(sizeof kSignals / sizeof kSignals[0] == StopLatch::kHandled);

extern "C" void note(int sig) { record::note_stop_signal(sig); }

}  // namespace

StopLatch::StopLatch() {
  record::clear_stop_signal();
  struct sigaction sa {};
  sa.sa_handler = note;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;  // between runs qprof reads traces and creates files: no EINTR there
  for (int i = 0; i < kHandled; ++i) {
    struct sigaction now {};
    ::sigaction(kSignals[i], nullptr, &now);
    if (now.sa_handler == SIG_IGN) continue;
    installed_[i] = ::sigaction(kSignals[i], &sa, &old_[i]) == 0;
  }
}

StopLatch::~StopLatch() {
  for (int i = 0; i < kHandled; ++i) {
    if (installed_[i]) ::sigaction(kSignals[i], &old_[i], nullptr);
  }
}

int StopLatch::signal() const { return record::received_stop_signal(); }

}  // namespace qprof::runs
