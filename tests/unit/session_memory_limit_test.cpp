// SPDX-License-Identifier: Apache-2.0
// The memory limit's watch alone: the 90 % warning, once, and what the report gets; the unread
// members' count, said once as it starts.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "session/memory_limit.hpp"
#include "session/unread_members.hpp"

namespace qprof::record::session {
namespace {

TEST(SessionMemoryLimitWatch, SaysOnceWhenTheTreeCrosses90PercentOfTheLimit) {
  std::vector<std::string> said;
  Notices notices(said);
  MemoryLimitWatch watch(MemoryLimit{1000, "cgroup", "memory.max of /sys/fs/cgroup/job"});
  testing::internal::CaptureStderr();
  watch.check(899, notices);
  EXPECT_TRUE(said.empty());
  watch.check(900, notices);
  watch.check(990, notices);
  testing::internal::GetCapturedStderr();
  ASSERT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("crossed 90 % of the cgroup limit"), std::string::npos);
  EXPECT_NE(said[0].find("memory.max of /sys/fs/cgroup/job"), std::string::npos);
  const LimitReport report = watch.report();
  EXPECT_EQ(report.bytes, Bytes{1000});
  EXPECT_EQ(report.source, "cgroup");
  EXPECT_TRUE(report.warned);
}

TEST(SessionMemoryLimitWatch, WithoutALimitNothingIsSaidOrReported) {
  std::vector<std::string> said;
  Notices notices(said);
  MemoryLimitWatch watch;
  watch.check(Bytes{1} << 50, notices);
  EXPECT_TRUE(said.empty());
  const LimitReport report = watch.report();
  EXPECT_FALSE(report.bytes);
  EXPECT_FALSE(report.warned);
}

TEST(SessionUnreadMembers, SaidOnceAsItStartsCountedAndSaidAgainAtTheEnd) {
  std::vector<std::string> said;
  Notices notices(said);
  UnreadMembers unread;
  testing::internal::CaptureStderr();
  unread.update(0, notices);
  EXPECT_TRUE(said.empty());
  unread.update(2, notices);
  unread.update(3, notices);
  EXPECT_EQ(said.size(), 1u);
  EXPECT_NE(said[0].find("out of file descriptors"), std::string::npos);
  EXPECT_EQ(unread.count(), 3u);
  const std::string path = ::testing::TempDir() + "unread.dat";
  {
    trace::Writer out(path);
    unread.finish(3, notices, out);
  }
  testing::internal::GetCapturedStderr();
  ASSERT_EQ(said.size(), 2u);
  EXPECT_NE(said[1].find("3 process(es) of the tree could not be read"), std::string::npos);
}

TEST(SessionUnreadMembers, NothingAtTheEndWhenEveryMemberWasRead) {
  std::vector<std::string> said;
  Notices notices(said);
  UnreadMembers unread;
  const std::string path = ::testing::TempDir() + "all-read.dat";
  trace::Writer out(path);
  unread.finish(0, notices, out);
  EXPECT_TRUE(said.empty());
  EXPECT_EQ(unread.count(), 0u);
}

}  // namespace
}  // namespace qprof::record::session
