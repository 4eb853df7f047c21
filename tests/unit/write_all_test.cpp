// SPDX-License-Identifier: Apache-2.0
// write_all: every byte, through signals, and what reached the descriptor when a write fails.
#include "qprof/common/write_all.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <string>
#include <thread>

namespace qprof {
namespace {

struct Pipe {
  int read = -1, write = -1;
  Pipe() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) == 0) read = fds[0], write = fds[1];
  }
  ~Pipe() {
    if (read >= 0) ::close(read);
    if (write >= 0) ::close(write);
  }
};

// A handler without SA_RESTART, as qprof's signal relay installs them: a blocked write returns
// EINTR, or a short count, at each signal.
TEST(WriteAll, SignalsDuringABlockedWriteLoseNothing) {
  Pipe p;
  ASSERT_GE(p.write, 0);
  struct sigaction quiet {
  }, old{};
  quiet.sa_handler = [](int) {};
  sigemptyset(&quiet.sa_mask);
  quiet.sa_flags = 0;
  ASSERT_EQ(::sigaction(SIGUSR1, &quiet, &old), 0);
  const pthread_t writer = ::pthread_self();
  std::string got;
  std::thread reader([&] {
    // The write of 300 kB fills the 64 KiB pipe and blocks until the drain below.
    for (int i = 0; i < 20; ++i) {
      ::pthread_kill(writer, SIGUSR1);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    char buf[65536];
    ssize_t n = 0;
    while ((n = ::read(p.read, buf, sizeof buf)) > 0) got.append(buf, static_cast<std::size_t>(n));
  });
  std::string text(300000, 'x');
  text.back() = '\n';
  const WriteOutcome w = write_all(p.write, text);
  ::close(p.write);
  p.write = -1;
  reader.join();
  ::sigaction(SIGUSR1, &old, nullptr);
  EXPECT_TRUE(w.ok());
  EXPECT_EQ(w.written, text.size());
  EXPECT_EQ(got, text);
}

// A pipe that takes part of the text: the outcome says how much reached it and why the rest did not.
TEST(WriteAll, AFailureSaysWhatWasWritten) {
  Pipe p;
  ASSERT_GE(p.write, 0);
  ASSERT_EQ(::fcntl(p.write, F_SETFL, O_NONBLOCK), 0);
  const int capacity = ::fcntl(p.write, F_GETPIPE_SZ);
  ASSERT_GT(capacity, 0);
  const std::string text(static_cast<std::size_t>(capacity) + 1000, 'y');
  const WriteOutcome w = write_all(p.write, text);
  EXPECT_FALSE(w.ok());
  EXPECT_EQ(w.error, EAGAIN);
  EXPECT_EQ(w.written, static_cast<std::size_t>(capacity));
}

TEST(WriteAll, AReaderGoneIsAnError) {
  Pipe p;
  ASSERT_GE(p.write, 0);
  ::close(p.read);
  p.read = -1;
  struct sigaction ignore {
  }, old{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGPIPE, &ignore, &old), 0);
  const WriteOutcome w = write_all(p.write, "a line\n");
  ::sigaction(SIGPIPE, &old, nullptr);
  EXPECT_EQ(w.error, EPIPE);
  EXPECT_EQ(w.written, 0u);
}

TEST(WriteAll, NothingToWriteWritesNothing) {
  // Not even to a descriptor that does not exist.
  const WriteOutcome w = write_all(-1, "");
  EXPECT_TRUE(w.ok());
  EXPECT_EQ(w.written, 0u);
  EXPECT_EQ(write_all(-1, "x").error, EBADF);
}

}  // namespace
}  // namespace qprof
