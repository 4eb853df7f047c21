// SPDX-License-Identifier: Apache-2.0
// The CLI's one writer of words to stderr.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "interrupted_pipe.hpp"
#include "stderr_speaker.hpp"

namespace qprof::cli {
namespace {

// qprof's signal relay installs its handlers without SA_RESTART (a signal must cut the sampler's
// sleep short), so a write to a full stderr pipe on that thread is cut by EINTR. The line still
// arrives whole, and so do the lines after it (std::cerr dropped the rest of them there).
TEST(StderrSpeaker, ASignalDuringABlockedWriteLosesNothing) {
  const std::string big(300000, 'x');
  const std::string got = test::written_while_interrupted([&](int fd) {
    const int saved = ::dup(STDERR_FILENO);
    ::dup2(fd, STDERR_FILENO);
    const Speaker say = stderr_speaker("test");
    say.line(big);
    say.line("after");
    say.text("formatted\n");
    ::dup2(saved, STDERR_FILENO);  // the pipe's last writer is then `fd` alone
    ::close(saved);
  });
  EXPECT_EQ(got, "qprof test: " + big + "\nqprof test: after\nformatted\n");
}

TEST(StderrSpeaker, APrefixNamesTheSubcommandOrQprofAlone) {
  testing::internal::CaptureStderr();
  stderr_speaker("peak").line("a budget");
  stderr_speaker().line("a failure");
  warn_on_stderr("a note");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "qprof peak: a budget\nqprof: a failure\nqprof: warning: a note\n");
}

// A message wider than the output wraps at spaces, continued 4 columns in; never right after
// its prefix nor between a number and its unit, and a word wider than the line stays whole. COLUMNS sets the width here
// (stderr is a file, 80 columns without it).
TEST(StderrSpeaker, ALongMessageWrapsUnderItself) {
  const char* inherited = std::getenv("COLUMNS");
  const bool had = inherited != nullptr;
  const std::string kept = had ? inherited : "";
  ::setenv("COLUMNS", "30", 1);
  testing::internal::CaptureStderr();
  stderr_speaker("peak").line("the budget of 1.00 GiB was exceeded by 12.0 MiB");
  stderr_speaker("peak").line("/a/path/wider/than/thirty/columns/x.dat: gone");
  const std::string got = testing::internal::GetCapturedStderr();
  if (had)
    ::setenv("COLUMNS", kept.c_str(), 1);
  else
    ::unsetenv("COLUMNS");
  EXPECT_EQ(got,
            "qprof peak: the budget of\n"
            "    1.00 GiB was exceeded by\n"
            "    12.0 MiB\n"
            "qprof peak: /a/path/wider/than/thirty/columns/x.dat:\n"
            "    gone\n");
}

}  // namespace
}  // namespace qprof::cli
