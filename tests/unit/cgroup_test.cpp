// The tree's cgroup, on the hierarchies this machine has (needs root; skipped otherwise).
#include "qprof/record/cgroup.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../support/own_cgroup.hpp"

namespace qprof {
namespace {

namespace fs = std::filesystem;
using test::own_memory_cgroup;

std::string mountinfo_with(const std::string& line) {
  const std::string path = (fs::temp_directory_path() / ("qprof-mountinfo-" + std::to_string(getpid()))).string();
  std::ofstream(path) << line << "\n";
  return path;
}

TEST(TreeCgroup, CgroupV2WithoutMemoryControllerGivesMembershipOnly) {
  if (geteuid() != 0 || !fs::exists("/sys/fs/cgroup/unified/cgroup.procs")) {
    GTEST_SKIP() << "needs root and a cgroup v2 hierarchy at /sys/fs/cgroup/unified";
  }
  const std::string info =
      mountinfo_with("40 30 0:35 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw");
  std::string why;
  std::string dir;
  {
    auto cg = TreeCgroup::create(why, info);
    ASSERT_TRUE(cg) << why;
    EXPECT_FALSE(cg->is_v1());
    dir = cg->path();
    EXPECT_TRUE(fs::exists(cg->procs_path()));
    // Whether the memory controller could be enabled decides between figures and membership only.
    EXPECT_EQ(cg->has_memory(), fs::exists(dir + "/memory.current"));
    if (!cg->has_memory()) {
      EXPECT_FALSE(cg->usage());
      EXPECT_FALSE(cg->peak());
    }
  }
  EXPECT_FALSE(fs::exists(dir)) << "the cgroup is removed";
  fs::remove(info);
}

TEST(TreeCgroup, CgroupV1MemoryGivesUsageAndPeak) {
  if (geteuid() != 0 || !fs::exists("/sys/fs/cgroup/memory/cgroup.procs")) {
    GTEST_SKIP() << "needs root and a cgroup v1 memory hierarchy";
  }
  std::string why;
  std::string dir;
  {
    auto cg = TreeCgroup::create(why);
    ASSERT_TRUE(cg) << why;
    EXPECT_TRUE(cg->is_v1());
    EXPECT_TRUE(cg->has_memory());
    EXPECT_TRUE(cg->usage().has_value());
    EXPECT_TRUE(cg->peak().has_value());
    dir = cg->path();
  }
  EXPECT_FALSE(fs::exists(dir));
}

// The cgroup v1 memory path of this process, "" if none.
TEST(TreeCgroup, NestsUnderItsOwnCgroupAndRemovesGroupsOfDeadQprofs) {
  const std::string own = own_memory_cgroup();
  if (geteuid() != 0 || own.empty() || !fs::exists("/sys/fs/cgroup/memory/cgroup.procs")) {
    GTEST_SKIP() << "needs root and a cgroup v1 memory hierarchy";
  }
  // A group standing for "qprof's own cgroup", below the real one, and a group of a qprof that
  // died: a PID that was just reaped.
  const std::string rel = (own == "/" ? "" : own) + "/qprof-unit-" + std::to_string(getpid());
  const std::string parent = "/sys/fs/cgroup/memory" + rel;
  ASSERT_TRUE(fs::create_directory(parent)) << parent;
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  ASSERT_GT(dead, 0);
  waitpid(dead, nullptr, 0);
  const std::string stale = parent + "/qprof-" + std::to_string(dead);
  ASSERT_TRUE(fs::create_directory(stale));
  const std::string proc_cgroup = mountinfo_with("4:memory:" + rel);
  std::string why, dir;
  {
    auto cg = TreeCgroup::create(why, "/proc/self/mountinfo", proc_cgroup);
    ASSERT_TRUE(cg) << why;
    dir = cg->path();
    EXPECT_EQ(dir, parent + "/qprof-" + std::to_string(getpid()));
    EXPECT_FALSE(fs::exists(stale)) << "the group of a dead qprof is removed";
  }
  EXPECT_FALSE(fs::exists(dir));
  fs::remove(proc_cgroup);
  rmdir(parent.c_str());
}

TEST(TreeCgroup, NoHierarchySaysWhy) {
  const std::string info = mountinfo_with("20 1 0:19 / /proc rw,nosuid - proc proc rw");
  std::string why;
  EXPECT_FALSE(TreeCgroup::create(why, info));
  EXPECT_EQ(why, "no cgroup v1 memory or cgroup v2 hierarchy is mounted");
  fs::remove(info);
}

}  // namespace
}  // namespace qprof
