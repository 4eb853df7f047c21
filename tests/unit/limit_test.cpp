// SPDX-License-Identifier: Apache-2.0
// The memory limit in force, found on fake /proc and /sys/fs/cgroup trees and a fake environment.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "fake_proc.hpp"
#include "qprof/record/limit.hpp"

namespace qprof::test {
using record::find_memory_limit;
using record::LimitProbe;
namespace {

namespace fs = std::filesystem;
constexpr Bytes kMiB = Bytes{1} << 20;

class LimitTest : public ::testing::Test {
 protected:
  LimitTest() : cgroups_(fs::path(proc_.root()) / "sys-fs-cgroup") {
    fs::create_directories(cgroups_);
    put(fs::path(proc_.root()) / "meminfo",
        "MemTotal:       16384000 kB\nMemFree:        1000 kB\nHugePages_Total:       0\n");
    probe_.proc_root = proc_.root();
    probe_.cgroup_root = cgroups_.string();
    probe_.getenv = [this](const char* name) -> const char* {
      const auto it = env_.find(name);
      return it == env_.end() ? nullptr : it->second.c_str();
    };
    probe_.rlimit_as = RLIM_INFINITY;
  }
  static void put(const fs::path& p, const std::string& text) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  void self_cgroup(const std::string& text) { put(fs::path(proc_.root()) / "self" / "cgroup", text); }

  FakeProc proc_;
  fs::path cgroups_;
  std::map<std::string, std::string> env_;
  LimitProbe probe_;
};

TEST_F(LimitTest, WithoutAnyLimitItIsTheMachinesMemTotal) {
  const auto l = find_memory_limit(probe_);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->bytes, Bytes{16384000} * 1024);
  EXPECT_EQ(l->source, "memtotal");
}

TEST_F(LimitTest, CgroupV2TakesTheTightestOfMaxAndHighUpTheHierarchy) {
  self_cgroup("0::/slurm/job42/step0\n");
  put(cgroups_ / "slurm" / "memory.max", "max\n");
  put(cgroups_ / "slurm" / "job42" / "memory.max", std::to_string(6 * 1024 * kMiB) + "\n");
  put(cgroups_ / "slurm" / "job42" / "memory.high", "max\n");
  put(cgroups_ / "slurm" / "job42" / "step0" / "memory.max", "max\n");
  put(cgroups_ / "slurm" / "job42" / "step0" / "memory.high", std::to_string(5632 * kMiB) + "\n");
  const auto l = find_memory_limit(probe_);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->bytes, 5632 * kMiB);
  EXPECT_EQ(l->source, "cgroup");
  EXPECT_NE(l->detail.find("memory.high"), std::string::npos) << l->detail;
  // The parent's memory.max, when it is the tighter.
  put(cgroups_ / "slurm" / "job42" / "memory.max", std::to_string(5 * 1024 * kMiB) + "\n");
  EXPECT_EQ(find_memory_limit(probe_)->bytes, 5 * 1024 * kMiB);
}

TEST_F(LimitTest, CgroupV1ReadsLimitInBytesAndTheHierarchicalLimit) {
  self_cgroup("9:name=systemd:/\n4:cpu,memory:/batch/job7\n0::/\n");
  const fs::path job = cgroups_ / "memory" / "batch" / "job7";
  put(cgroups_ / "memory" / "memory.limit_in_bytes", "9223372036854771712\n");  // unlimited
  put(job / "memory.limit_in_bytes", "9223372036854771712\n");
  put(job / "memory.stat",
      "cache 0\nrss 0\nhierarchical_memory_limit 314572800\nhierarchical_memsw_limit 9223372036854771712\n");
  const auto l = find_memory_limit(probe_);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->bytes, 300 * kMiB);
  EXPECT_EQ(l->source, "cgroup-v1");
  put(cgroups_ / "memory" / "batch" / "memory.limit_in_bytes", std::to_string(200 * kMiB) + "\n");
  EXPECT_EQ(find_memory_limit(probe_)->bytes, 200 * kMiB);
}

TEST_F(LimitTest, CgroupPathMissingBelowTheMountStartsFromWhatExists) {
  // In a container the path seen in /proc/self/cgroup may not exist below the mount.
  self_cgroup("0::/host/side/path\n");
  put(cgroups_ / "memory.max", std::to_string(512 * kMiB) + "\n");
  const auto l = find_memory_limit(probe_);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->bytes, 512 * kMiB);
}

TEST_F(LimitTest, SlurmMemoryPerNodeOrPerCpuTimesCpus) {
  env_["SLURM_MEM_PER_NODE"] = "8192";
  auto l = find_memory_limit(probe_);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->bytes, 8192 * kMiB);
  EXPECT_EQ(l->source, "slurm");
  env_.erase("SLURM_MEM_PER_NODE");
  env_["SLURM_MEM_PER_CPU"] = "2000";
  env_["SLURM_CPUS_ON_NODE"] = "4";
  l = find_memory_limit(probe_);
  EXPECT_EQ(l->bytes, 8000 * kMiB);
  EXPECT_NE(l->detail.find("SLURM_CPUS_ON_NODE=4"), std::string::npos) << l->detail;
  env_.erase("SLURM_CPUS_ON_NODE");
  env_["SLURM_CPUS_PER_TASK"] = "3(x2)";
  EXPECT_EQ(find_memory_limit(probe_)->bytes, 6000 * kMiB);
}

TEST_F(LimitTest, RlimitAsCountsAndTheTightestSourceWins) {
  probe_.rlimit_as = 1024 * kMiB;
  auto l = find_memory_limit(probe_);
  EXPECT_EQ(l->bytes, 1024 * kMiB);
  EXPECT_EQ(l->source, "rlimit-as");
  self_cgroup("0::/job\n");
  put(cgroups_ / "job" / "memory.max", std::to_string(300 * kMiB) + "\n");
  l = find_memory_limit(probe_);
  EXPECT_EQ(l->bytes, 300 * kMiB);
  EXPECT_EQ(l->source, "cgroup");
}

TEST_F(LimitTest, GarbageIsIgnoredNotTrusted) {
  self_cgroup("garbage without colons\n0::/job\n");
  put(cgroups_ / "job" / "memory.max", "12abc\n");
  env_["SLURM_MEM_PER_NODE"] = "lots";
  const auto l = find_memory_limit(probe_);
  ASSERT_TRUE(l);
  EXPECT_EQ(l->source, "memtotal");
}

}  // namespace
}  // namespace qprof::test
