// SPDX-License-Identifier: Apache-2.0
// qprof run --mem SIZE: the tree in a memory cgroup of its own with that limit and no swap; the
// OOM kill it causes said with its process, limit and stage; refused where no cgroup can be had.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "e2e_util.hpp"
#include "qprof/analysis/dirs.hpp"
#include "qprof/trace/footprint.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
namespace {

namespace fs = std::filesystem;
constexpr Bytes kMiB = Bytes{1} << 20;

bool can_make_memory_cgroups(std::string& why) {
  if (::geteuid() != 0) {
    why = "a memory cgroup of the tree's own needs root here";
    return false;
  }
  if (sanitized()) {
    why = "the sanitized qprof's shadow memory would share the limited group";
    return false;
  }
  return true;
}

TEST(RunMem, TheTreeRunsUnderTheLimitAndTheKillIsExplained) {
  std::string why;
  if (!can_make_memory_cgroups(why)) GTEST_SKIP() << why;
  const std::string out = temp_dir() + "/mem.dat";
  // Two workers of 80 MiB each under 120 MiB: the second is killed while it touches its memory.
  const Result r = qprof({"run", "--mem", "120M", "-o", out, "--", workload("oom_workers"), "2", "80", "1000"});
  EXPECT_EQ(r.status, 0) << "the command's status (it waits for its workers and exits 0)\n" << r.err;
  const trace::Trace t = trace::read_trace(out);
  const auto limit = analysis::memory_limit(t);
  ASSERT_TRUE(limit);
  EXPECT_EQ(limit->bytes, 120 * kMiB);
  ASSERT_EQ(t.oom_kills.size(), 1u) << r.err;
  const trace::OomKill& k = t.oom_kills.front();
  EXPECT_EQ(k.role, "worker");
  EXPECT_EQ(k.name, "oom_workers");
  ASSERT_TRUE(k.limit);
  EXPECT_EQ(*k.limit, 120 * kMiB);
  ASSERT_TRUE(k.tree);
  EXPECT_LE(*k.tree, 121 * kMiB);
  // The footprint (the group's charge) never passes the limit.
  const auto fp = trace::footprint_of(t);
  ASSERT_TRUE(fp);
  EXPECT_LE(fp->peak, 120 * kMiB);
  const std::string said = unwrapped(r.err);
  EXPECT_NE(said.find("qprof:   OOM kill        process " + std::to_string(k.pid) + " (oom_workers, a worker)"),
            std::string::npos)
      << r.err;
  EXPECT_NE(said.find("limit of 120.0 MiB"), std::string::npos) << r.err;
  // The next request grows as VPA's does: max(120 + 100, 120 × 1.2) = 220 MiB.
  EXPECT_NE(said.find("--mem=220M"), std::string::npos) << r.err;
}

TEST(RunMem, AStageNamesWhereTheKillCame) {
  std::string why;
  if (!can_make_memory_cgroups(why)) GTEST_SKIP() << why;
  const std::string out = temp_dir() + "/stage.dat";
  const Result r = qprof({"run", "--mem", "100M", "-o", out, "--", "sh", "-c",
                          "echo 'QPROF_MARK: Load Start' >&2; " + workload("alloc_tree") +
                              " 200 0 0 100; echo 'QPROF_MARK: Load End' >&2"});
  EXPECT_EQ(r.status, 0) << r.err;  // sh's status: the last echo's
  const trace::Trace t = trace::read_trace(out);
  ASSERT_EQ(t.oom_kills.size(), 1u) << r.err;
  EXPECT_EQ(t.oom_kills.front().stage, "Load");
  EXPECT_EQ(t.oom_kills.front().name, "alloc_tree");
  EXPECT_NE(unwrapped(r.err).find("in stage Load"), std::string::npos) << r.err;
}

TEST(RunMem, RefusedWithoutTheRightToMakeACgroup) {
  if (::geteuid() != 0) {
    const Result r = qprof({"run", "--mem", "100M", "--", "true"});
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(r.err.find("--mem"), std::string::npos) << r.err;
    return;
  }
  const std::string qprof_copy = copy_for_other_users(qprof_bin());
  const std::string dir = fs::path(qprof_copy).parent_path().string();
  const Result r = run({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", qprof_copy, "run", "--mem",
                        "100M", "-o", dir + "/refused.dat", "--", "true"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find("--mem 100.0 MiB: qprof cannot make a memory cgroup for the tree"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("as root, or in a delegated cgroup v2 subtree"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/refused.dat")) << "no trace of a run that did not happen";
}

TEST(RunMem, BadSizesAndCgroupOffAreUsageErrors) {
  Result r = qprof({"run", "--mem", "lots", "--", "true"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--mem: 'lots' is not a size"), std::string::npos) << r.err;
  r = qprof({"run", "--mem", "1G", "--cgroup", "off", "--", "true"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("does not go with --cgroup off"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace qprof::test
