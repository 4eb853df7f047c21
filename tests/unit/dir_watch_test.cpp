// SPDX-License-Identifier: Apache-2.0
// The walk of a watched directory (exact sizes of a tree made here) and the watcher's schedule.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "qprof/record/dir_walk.hpp"
#include "qprof/record/dir_watch.hpp"

namespace qprof::test {
using record::DirSize;
using record::DirWatcher;
using record::walk_dir;
using trace::DirSample;

namespace {

namespace fs = std::filesystem;

struct TempTree {
  fs::path root =
      fs::temp_directory_path() / ("qprof-dirwalk-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
  TempTree() { fs::create_directories(root); }
  ~TempTree() {
    std::error_code ec;
    fs::permissions(root, fs::perms::all, ec);
    fs::remove_all(root, ec);
  }
  void file(const fs::path& rel, std::size_t bytes) {
    fs::create_directories((root / rel).parent_path());
    std::ofstream(root / rel) << std::string(bytes, 'x');
  }
  static inline int counter = 0;
};

TEST(DirWalk, SumsRegularFilesOnceEachWithoutFollowingLinks) {
  TempTree t;
  t.file("a", 1000);
  t.file("sub/b", 5000);
  t.file("sub/deeper/c", 123);
  fs::create_hard_link(t.root / "sub/b", t.root / "b_again");  // counted once
  fs::create_symlink("/usr", t.root / "usr_link");             // not followed
  fs::create_symlink(t.root / "a", t.root / "a_link");
  const DirSize s = walk_dir(t.root.string());
  EXPECT_TRUE(s.exists);
  EXPECT_EQ(s.apparent, 1000u + 5000u + 123u);
  EXPECT_TRUE(s.problems.empty());
  EXPECT_EQ(s.entries, 9u);  // root, a, sub, b, deeper, c, b_again (visited, not counted twice), usr_link, a_link
  EXPECT_GT(s.allocated, 0u);
  EXPECT_GT(s.fs_free, 0u);
}

TEST(DirWalk, AMissingDirectoryIsEmptyWithItsParentsFreeSpace) {
  TempTree t;
  const DirSize s = walk_dir((t.root / "not" / "yet").string());
  EXPECT_FALSE(s.exists);
  EXPECT_EQ(s.apparent, 0u);
  EXPECT_EQ(s.allocated, 0u);
  EXPECT_GT(s.fs_free, 0u);
  EXPECT_TRUE(s.problems.empty()) << "not existing yet is not a problem";
}

TEST(DirWalk, AnUnreadableSubdirectoryIsAProblemTheRestIsCounted) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads every directory (the e2e test runs qprof as nobody)";
  TempTree t;
  t.file("open/a", 100);
  t.file("closed/b", 100);
  fs::permissions(t.root / "closed", fs::perms::none);
  const DirSize s = walk_dir(t.root.string());
  fs::permissions(t.root / "closed", fs::perms::owner_all);
  EXPECT_EQ(s.apparent, 100u);
  ASSERT_EQ(s.problems.size(), 1u);
  EXPECT_NE(s.problems[0].find("closed"), std::string::npos) << s.problems[0];
}

TEST(DirWatcher, FirstWalkBeforeTheConstructorReturnsThenOnItsSchedule) {
  TempTree t;
  t.file("x", 4096);
  WallAnchor clock;
  DirWatcher w({t.root.string(), (t.root / "later").string()}, 0.05, clock);
  std::vector<DirSample> got;
  w.drain([&](const DirSample& s) { got.push_back(s); });
  ASSERT_EQ(got.size(), 2u) << "the baseline walk of both directories";
  EXPECT_EQ(got[0].dir, 0);
  EXPECT_EQ(got[0].apparent, 4096u);
  EXPECT_EQ(got[1].apparent, 0u);
  t.file("later/y", 777);
  ::usleep(400 * 1000);
  w.stop();
  got.clear();
  w.drain([&](const DirSample& s) { got.push_back(s); });
  ASSERT_GE(got.size(), 2u);
  EXPECT_EQ(got.back().dir, 1);
  EXPECT_EQ(got.back().apparent, 777u) << "watched from when it appeared";
  const DirWatcher::Stats st = w.stats();
  EXPECT_GE(st.walks, 2u);
  // A tiny tree costs microseconds: the schedule is the asked interval, and the cost within budget.
  EXPECT_LE(st.cpu_share(), DirWatcher::kCpuShare);
}

}  // namespace
}  // namespace qprof::test
