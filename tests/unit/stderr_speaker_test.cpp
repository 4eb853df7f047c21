// SPDX-License-Identifier: Apache-2.0
// The CLI's one writer of words to stderr.
#include <gtest/gtest.h>
#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <string>
#include <thread>

#include "stderr_speaker.hpp"

namespace qprof::cli {
namespace {

// qprof's signal relay installs its handlers without SA_RESTART (a signal must cut the sampler's
// sleep short), so a write to a full stderr pipe on that thread is cut by EINTR. The line still
// arrives whole, and so do the lines after it (std::cerr dropped the rest of them there).
TEST(StderrSpeaker, ASignalDuringABlockedWriteLosesNothing) {
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  const int saved = ::dup(STDERR_FILENO);
  ASSERT_GE(saved, 0);
  struct sigaction quiet {
  }, old{};
  quiet.sa_handler = [](int) {};
  sigemptyset(&quiet.sa_mask);
  quiet.sa_flags = 0;  // no SA_RESTART
  ASSERT_EQ(::sigaction(SIGUSR1, &quiet, &old), 0);
  ASSERT_GE(::dup2(pipe_fds[1], STDERR_FILENO), 0);

  const pthread_t writer = ::pthread_self();
  std::string got;
  std::thread reader([&] {
    // The pipe holds 64 KiB: the write below blocks until this thread drains it. Meanwhile the
    // writer is interrupted again and again.
    for (int i = 0; i < 20; ++i) {
      ::pthread_kill(writer, SIGUSR1);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    char buf[65536];
    ssize_t n = 0;
    while ((n = ::read(pipe_fds[0], buf, sizeof buf)) > 0) got.append(buf, static_cast<std::size_t>(n));
  });
  const std::string big(300000, 'x');
  const Speaker say = stderr_speaker("test");
  say.line(big);
  say.line("after");
  say.text("formatted\n");
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(pipe_fds[1]);
  reader.join();
  ::close(pipe_fds[0]);
  ::sigaction(SIGUSR1, &old, nullptr);
  EXPECT_EQ(got.size(), big.size() + 12 + 19 + 10);
  EXPECT_EQ(got, "qprof test: " + big + "\nqprof test: after\nformatted\n");
}

TEST(StderrSpeaker, APrefixNamesTheSubcommandOrQprofAlone) {
  testing::internal::CaptureStderr();
  stderr_speaker("peak").line("a budget");
  stderr_speaker().line("a failure");
  warn_on_stderr("a note");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "qprof peak: a budget\nqprof: a failure\nqprof: warning: a note\n");
}

}  // namespace
}  // namespace qprof::cli
