// SPDX-License-Identifier: Apache-2.0
// qprof fit's cgroup files, written on fabricated cgroup trees in a temporary directory (cgroup v2
// cannot be mounted here), and memory.stat's unreclaimable part.
#include "qprof/fit/probe_group.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "temp_files.hpp"

namespace qprof::fit {
namespace {

namespace fs = std::filesystem;
using test::whole_file;

constexpr Bytes MiB = Bytes{1} << 20;

// A group directory holding empty files of these names, as the kernel creates them.
class FakeGroup {
 public:
  explicit FakeGroup(std::initializer_list<const char*> files)
      : dir_(test::unit_temp_file("group-" + std::to_string(++count_))) {
    fs::create_directories(dir_);
    for (const char* f : files) std::ofstream(dir_ + "/" + f) << "";
  }
  ~FakeGroup() { fs::remove_all(dir_); }
  const std::string& dir() const { return dir_; }
  std::string file(const char* name) const { return whole_file(dir_ + "/" + name); }
  bool has(const char* name) const { return fs::exists(dir_ + "/" + name); }

 private:
  static inline int count_ = 0;
  std::string dir_;
};

TEST(FitGroupFiles, V2WritesMemoryMaxAndNoSwap) {
  const FakeGroup g({"memory.max", "memory.swap.max", "memory.current"});
  const LimitWrite w = write_memory_limit(g.dir(), false, 200 * MiB);
  EXPECT_TRUE(w.ok) << w.error;
  EXPECT_TRUE(w.swap_limited);
  EXPECT_EQ(g.file("memory.max"), "209715200");
  EXPECT_EQ(g.file("memory.swap.max"), "0");
}

TEST(FitGroupFiles, V2WithoutSwapControlSaysSoAndCreatesNothing) {
  const FakeGroup g({"memory.max"});
  const LimitWrite w = write_memory_limit(g.dir(), false, 64 * MiB);
  EXPECT_TRUE(w.ok) << w.error;
  EXPECT_FALSE(w.swap_limited);
  EXPECT_FALSE(g.has("memory.swap.max")) << "a file the kernel lacks is not made up";
}

TEST(FitGroupFiles, V1WritesTheMemoryLimitThenMemsw) {
  const FakeGroup g({"memory.limit_in_bytes", "memory.memsw.limit_in_bytes"});
  const LimitWrite w = write_memory_limit(g.dir(), true, 300 * MiB);
  EXPECT_TRUE(w.ok && w.swap_limited) << w.error;
  EXPECT_EQ(g.file("memory.limit_in_bytes"), "314572800");
  EXPECT_EQ(g.file("memory.memsw.limit_in_bytes"), "314572800");
  const FakeGroup no_memsw({"memory.limit_in_bytes"});
  const LimitWrite w2 = write_memory_limit(no_memsw.dir(), true, 300 * MiB);
  EXPECT_TRUE(w2.ok);
  EXPECT_FALSE(w2.swap_limited) << "swap accounting off: swap cannot be limited";
}

TEST(FitGroupFiles, AMissingLimitFileIsAnErrorNamingIt) {
  const FakeGroup g({});
  const LimitWrite w = write_memory_limit(g.dir(), false, 64 * MiB);
  EXPECT_FALSE(w.ok);
  EXPECT_NE(w.error.find("memory.max"), std::string::npos) << w.error;
}

TEST(FitGroupFiles, EvictionWritesReclaimOrForceEmpty) {
  const FakeGroup v2({"memory.reclaim"});
  EXPECT_TRUE(evict_page_cache(v2.dir(), false, 123 * MiB));
  EXPECT_EQ(v2.file("memory.reclaim"), std::to_string(123 * MiB));
  const FakeGroup v1({"memory.force_empty"});
  EXPECT_TRUE(evict_page_cache(v1.dir(), true, 5 * MiB));
  EXPECT_EQ(v1.file("memory.force_empty"), "0");
  const FakeGroup old_v2({});
  EXPECT_FALSE(evict_page_cache(old_v2.dir(), false, MiB)) << "no memory.reclaim before Linux 5.19";
  EXPECT_TRUE(evict_page_cache(old_v2.dir(), false, 0)) << "nothing charged, nothing to evict";
}

TEST(FitGroupFiles, KillingAnEmptyGroupUsesCgroupKillWhereItExists) {
  const FakeGroup g({"cgroup.kill", "cgroup.procs"});
  EXPECT_TRUE(kill_members(g.dir()));
  EXPECT_EQ(g.file("cgroup.kill"), "1");
}

TEST(FitMemoryStat, UnreclaimableIsAnonymousPlusShared) {
  EXPECT_EQ(unreclaimable_bytes("cache 500\nrss_huge 9\nrss 100\nshmem 7\nmapped_file 3\n", true), 107u);
  EXPECT_EQ(unreclaimable_bytes("anon 50\nfile 900\nshmem 3\n", false), 53u);
  EXPECT_EQ(unreclaimable_bytes("anon_thp 50\nfile 900\n", false), std::nullopt) << "no anon line";
  EXPECT_EQ(stat_value("rss_huge 5\nrss 3\n", "rss"), 3u) << "a key is a whole word";
  EXPECT_EQ(stat_value("pgmajfault 12", "pgmajfault"), 12u);
}

}  // namespace
}  // namespace qprof::fit
