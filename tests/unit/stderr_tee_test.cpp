// SPDX-License-Identifier: Apache-2.0
// The copy of the job's stderr: every byte passed on as it came, the marker lines found in it.
#include "qprof/record/stderr_tee.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "qprof/common/write_all.hpp"
#include "temp_files.hpp"

namespace qprof {
namespace {

struct Teed {
  std::string copied;
  std::vector<std::string> labels;
};

// `text` written to the tee's pipe in writes of `piece` bytes, then the pipe closed.
Teed tee(const std::string& text, std::size_t piece, record::MarkerMatcher matcher = {}) {
  test::RemovedTempFile out("stderr-tee");
  const int to = ::open(out.path().c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  int fds[2];
  EXPECT_EQ(::pipe2(fds, O_CLOEXEC), 0);
  Teed got;
  {
    record::StderrTee t(fds[0], to, std::move(matcher), [&](const std::string& label) {
      got.labels.push_back(label);  // on the tee's thread; read once finish() joined it
      return true;
    });
    t.start();
    for (std::size_t at = 0; at < text.size(); at += piece) {
      EXPECT_TRUE(write_all(fds[1], std::string_view(text).substr(at, piece)).ok());
    }
    ::close(fds[1]);
    t.finish(10000);  // returns once the tee has read the end
  }
  ::close(to);
  got.copied = test::whole_file(out.path());
  return got;
}

TEST(StderrTee, PassesEveryByteOnAndFindsMarkersPastLongLinesAndCarriageReturns) {
  std::string text = std::string(4080, '0') + " QPROF_MARK: Load Start\r\n";
  for (int i = 0; i < 300; ++i) text += "\rprogress " + std::to_string(i) + "/300";
  text += "\r" + std::string(100000, 'x') + "QPROF_MARK: Load End\n";
  text += std::string("bytes \0\xff\r\r\n", 11) + "QPROF_MARK: Tail";  // the last line has no end
  for (const std::size_t piece : {std::size_t{1000}, std::size_t{65536}}) {
    const Teed got = tee(text, piece);
    EXPECT_EQ(got.copied, text) << piece;
    EXPECT_EQ(got.labels, (std::vector<std::string>{"Load Start", "Load End", "Tail"})) << piece;
  }
}

TEST(StderrTee, ARegexSeesTheLinesTheCarriageReturnsEnd) {
  const Teed got = tee("[s] A\r10%\r[s] B\r\n[s] C", 3, *record::MarkerMatcher::compile("^\\[s\\] (.*)$"));
  EXPECT_EQ(got.labels, (std::vector<std::string>{"A", "B", "C"}));
}

}  // namespace
}  // namespace qprof
