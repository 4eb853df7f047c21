// SPDX-License-Identifier: Apache-2.0
// write_all: every byte, through signals, and what reached the descriptor when a write fails.
#include "qprof/common/write_all.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <string>

#include "interrupted_pipe.hpp"

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

// 20 signals while a write of 300 kB is blocked on a full pipe.
TEST(WriteAll, SignalsDuringABlockedWriteLoseNothing) {
  std::string text(300000, 'x');
  text.back() = '\n';
  WriteOutcome w;
  const std::string got = test::written_while_interrupted([&](int fd) { w = write_all(fd, text); });
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
