// SPDX-License-Identifier: Apache-2.0
#include "unlink_on_signal.hpp"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <mutex>

namespace qprof::detail {
namespace {

// A few writers at once at most (a --yaml-stream rewrite beside the final write): fixed slots,
// so that the handler reads nothing but plain memory and atomics.
constexpr int kSlots = 8;
enum : int { kFree = 0, kFilling = 1, kArmed = 2 };
char g_paths[kSlots][PATH_MAX];
std::atomic<int> g_state[kSlots];
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler reads the slots");

constexpr int kSignals[] = {SIGINT, SIGTERM, SIGHUP};
constexpr int kSignalCount = sizeof kSignals / sizeof kSignals[0];
std::mutex g_install_mutex;  // installing and restoring, never taken by the handler
int g_users = 0;
struct sigaction g_old[kSignalCount];
bool g_installed[kSignalCount] = {};

extern "C" void unlink_and_die(int sig) {
  const int saved = errno;
  for (int i = 0; i < kSlots; ++i) {
    if (g_state[i].load() == kArmed) ::unlink(g_paths[i]);
  }
  errno = saved;
  ::raise(sig);  // SA_RESETHAND: the default action, once this handler returns
}

void install() {
  for (int i = 0; i < kSignalCount; ++i) {
    struct sigaction now {};
    if (::sigaction(kSignals[i], nullptr, &now) != 0 || now.sa_handler != SIG_DFL) continue;
    struct sigaction sa {};
    sa.sa_handler = unlink_and_die;
    sa.sa_flags = SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    g_installed[i] = ::sigaction(kSignals[i], &sa, &g_old[i]) == 0;
  }
}

void restore() {
  for (int i = 0; i < kSignalCount; ++i) {
    if (g_installed[i]) ::sigaction(kSignals[i], &g_old[i], nullptr);
    g_installed[i] = false;
  }
}

}  // namespace

int guard_unlink_on_signal(const std::string& path) {
  if (path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = kFree;
    if (!g_state[i].compare_exchange_strong(expected, kFilling)) continue;
    std::memcpy(g_paths[i], path.c_str(), path.size() + 1);
    g_state[i].store(kArmed);
    std::lock_guard<std::mutex> lock(g_install_mutex);
    if (g_users++ == 0) install();
    return i;
  }
  return -1;
}

void release_unlink_on_signal(int slot) {
  if (slot < 0 || slot >= kSlots) return;
  {
    std::lock_guard<std::mutex> lock(g_install_mutex);
    if (--g_users == 0) restore();
  }
  g_state[slot].store(kFree);
}

}  // namespace qprof::detail
