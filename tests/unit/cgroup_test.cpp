// The tree's cgroup, on the hierarchies this machine has (needs root; skipped otherwise).
#include "qprof/record/cgroup.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace qprof {
namespace {

namespace fs = std::filesystem;

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

TEST(TreeCgroup, NoHierarchySaysWhy) {
  const std::string info = mountinfo_with("20 1 0:19 / /proc rw,nosuid - proc proc rw");
  std::string why;
  EXPECT_FALSE(TreeCgroup::create(why, info));
  EXPECT_EQ(why, "no cgroup v1 memory or cgroup v2 hierarchy is mounted");
  fs::remove(info);
}

}  // namespace
}  // namespace qprof
