// SPDX-License-Identifier: Apache-2.0
// A write that blocks on a full pipe while signals interrupt it, as one of qprof's threads meets
// them: its signal relay installs its handlers without SA_RESTART (to cut the sampler's sleep
// short), so a blocked write returns EINTR, or a short count, at each signal.
#pragma once

#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <functional>
#include <string>
#include <thread>

namespace qprof::test {

// What `write` wrote into a pipe's end `fd`: its reader waits while SIGUSR1 reaches the writing
// thread 20 times, 5 ms apart (a pipe holds 64 KiB: a larger write blocks meanwhile), then drains
// it. The pipe's end is closed after `write` returns.
inline std::string written_while_interrupted(const std::function<void(int fd)>& write) {
  int fds[2];
  if (::pipe(fds) != 0) return "pipe failed";
  struct sigaction quiet {
  }, old{};
  quiet.sa_handler = [](int) {};
  sigemptyset(&quiet.sa_mask);
  quiet.sa_flags = 0;  // no SA_RESTART
  ::sigaction(SIGUSR1, &quiet, &old);
  const pthread_t writer = ::pthread_self();
  std::string got;
  std::thread reader([&] {
    for (int i = 0; i < 20; ++i) {
      ::pthread_kill(writer, SIGUSR1);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    char buf[65536];
    ssize_t n = 0;
    while ((n = ::read(fds[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<std::size_t>(n));
  });
  write(fds[1]);
  ::close(fds[1]);
  reader.join();
  ::close(fds[0]);
  ::sigaction(SIGUSR1, &old, nullptr);
  return got;
}

}  // namespace qprof::test
