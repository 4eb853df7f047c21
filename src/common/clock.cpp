// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/clock.hpp"

#include <time.h>

#include <cerrno>

namespace qprof {
namespace {
std::int64_t to_ns(const timespec& ts) { return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec; }
}  // namespace

std::int64_t monotonic_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return to_ns(ts);
}

std::int64_t thread_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return to_ns(ts);
}

bool sleep_until_ns(std::int64_t deadline_ns) {
  timespec ts;
  ts.tv_sec = static_cast<time_t>(deadline_ns / 1000000000);
  ts.tv_nsec = static_cast<long>(deadline_ns % 1000000000);
  return clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != EINTR;
}

WallAnchor::WallAnchor() {
  // Read the wall clock between two monotonic readings and pair it with their midpoint.
  timespec m1, wall, m2;
  clock_gettime(CLOCK_MONOTONIC, &m1);
  clock_gettime(CLOCK_REALTIME, &wall);
  clock_gettime(CLOCK_MONOTONIC, &m2);
  mono0_ = (to_ns(m1) + to_ns(m2)) / 2;
  unix0_ = static_cast<double>(wall.tv_sec) + static_cast<double>(wall.tv_nsec) * 1e-9;
}

std::int64_t next_deadline(std::int64_t previous, std::int64_t period, std::int64_t now, std::uint64_t& missed) {
  const std::int64_t next = previous + period;
  if (next > now) return next;
  const std::int64_t skipped = (now - next) / period + 1;
  missed += static_cast<std::uint64_t>(skipped);
  return next + skipped * period;
}

}  // namespace qprof
