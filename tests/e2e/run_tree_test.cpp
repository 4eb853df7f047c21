// SPDX-License-Identifier: Apache-2.0
// The tree: children, double-forked daemons, per-process lines, the cgroup mode.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using trace::ChildSeries;
using trace::MemSample;
using trace::Trace;

namespace {

// The tree peak of alloc_tree with these sizes, and the same tree allocating nothing.
struct TreePeaks {
  Trace loaded;
  Bytes baseline;
};

TreePeaks alloc_tree_peaks(const std::vector<std::string>& extra = {}) {
  const std::string base = temp_dir() + "/tree_base.dat", full = temp_dir() + "/tree_full.dat";
  std::vector<std::string> a{"run", "-q", "-o", base};
  a.insert(a.end(), extra.begin(), extra.end());
  a.insert(a.end(), {"--", workload("alloc_tree"), "0", "3", "0", "300"});
  EXPECT_EQ(qprof(a).status, 0);
  std::vector<std::string> b{"run", "-q", "-o", full};
  b.insert(b.end(), extra.begin(), extra.end());
  b.insert(b.end(), {"--", workload("alloc_tree"), "100", "3", "100", "400"});
  EXPECT_EQ(qprof(b).status, 0);
  return {trace::read_trace(full), max_mem(trace::read_trace(base))};
}

TEST(RunTree, PeakOfParentAndThreeChildrenIsTheirSum) {
  const TreePeaks p = alloc_tree_peaks();
  const double expected = 400.0 + mib(p.baseline);
  EXPECT_NEAR(mib(max_mem(p.loaded)), expected, 0.05 * expected);
  // The checkpoint at "Hold Start" was sampled when all four processes held their memory.
  ASSERT_FALSE(p.loaded.markers.empty());
  EXPECT_EQ(p.loaded.markers.front().label, "Hold Start");
  EXPECT_NEAR(mib(*p.loaded.markers.front().at.rss), expected, 0.05 * expected);
}

TEST(RunTree, DoubleForkedDaemonStaysInTheTreeAndIsWaitedFor) {
  const std::string out = temp_dir() + "/daemon.dat";
  const auto t0 = std::chrono::steady_clock::now();
  const Result r = qprof({"run", "-o", out, "--", workload("daemonize"), "150", "1500"});
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_GE(elapsed, 1.5);  // qprof waited for the daemon
  const Trace t = trace::read_trace(out);
  EXPECT_NEAR(mib(max_mem(t)), 150.0, 150.0 * 0.05 + 2.0);
  ASSERT_EQ(t.stages.size(), 1u);
  EXPECT_EQ(t.stages[0].name, "Daemon");
  EXPECT_GE(t.stages[0].t_end - t.stages[0].t_start, 1.4);
}

TEST(RunTree, NoWaitDaemonsStopsWhenTheCommandExits) {
  const std::string out = temp_dir() + "/nowait.dat";
  const auto t0 = std::chrono::steady_clock::now();
  const Result r = qprof({"run", "-q", "--no-wait-daemons", "-o", out, "--", workload("daemonize"), "10", "3000"});
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_LT(elapsed, 2.5);
  const Trace t = trace::read_trace(out);
  ASSERT_TRUE(t.exit);
  EXPECT_EQ(t.exit->status, 0);
}

TEST(RunTree, MultiprocessWritesEachChildAsMprofDoes) {
  const std::string out = temp_dir() + "/multi.dat";
  ASSERT_EQ(qprof({"run", "-q", "-M", "-o", out, "--", workload("alloc_tree"), "10", "2", "60", "300"}).status, 0);
  const Trace t = trace::read_trace(out);
  ASSERT_EQ(t.children.size(), 2u);
  for (const ChildSeries& c : t.children) {
    Bytes peak = 0;
    for (const MemSample& s : c.samples) peak = std::max(peak, s.bytes);
    EXPECT_NEAR(mib(peak), 60.0, 60.0 * 0.05 + 1.0) << "child " << c.pid;
    EXPECT_NE(c.pid, t.meta.root_pid);
  }
}

TEST(RunTree, CgroupModeGivesTheExactTreePeakOrSaysWhyNot) {
  const std::string out = temp_dir() + "/cgroup.dat";
  const Result r = qprof({"run", "--cgroup", "-o", out, "--", workload("alloc_tree"), "50", "2", "50", "300"});
  EXPECT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  const bool can = geteuid() == 0 && std::filesystem::exists("/sys/fs/cgroup/memory/cgroup.procs");
  if (can) {
    ASSERT_TRUE(t.peaks.count("cgroup")) << r.err;
    const double cg = mib(t.peaks.at("cgroup"));
    // The cgroup counts every page the tree charged, exactly: at least the sampled peak's
    // private memory, and not much more (page tables, the binaries' page cache).
    EXPECT_GE(cg, 150.0);
    EXPECT_LE(cg, mib(max_mem(t)) * 1.1 + 8.0);
    EXPECT_NE(r.err.find("cgroup charge"), std::string::npos);
    ASSERT_TRUE(t.meta.other.count("cgroup"));
    EXPECT_FALSE(std::filesystem::exists(t.meta.other.at("cgroup"))) << "the cgroup was not removed";
  } else {
    EXPECT_NE(r.err.find("--cgroup: cannot create a cgroup"), std::string::npos) << r.err;
  }
}

TEST(RunTree, CgroupRefusedToAnOrdinaryUserIsSaidOnceAndTheRunGoesOn) {
  if (geteuid() != 0) GTEST_SKIP() << "run as an ordinary user already (see the test above)";
  const std::string qprof_copy = copy_for_other_users(qprof_bin()),
                    job_copy = copy_for_other_users(workload("alloc_tree"));
  const std::string out = std::filesystem::path(qprof_copy).parent_path().string() + "/cgroup_nobody.dat";
  const Result r = run({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", qprof_copy, "run", "--cgroup",
                        "-o", out, "--", job_copy, "20", "1", "20", "200"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string said = "--cgroup: cannot create a cgroup";
  ASSERT_NE(r.err.find(said), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find(said, r.err.find(said) + 1), std::string::npos) << "said once";
  const Trace t = trace::read_trace(out);
  EXPECT_FALSE(t.peaks.count("cgroup"));
  EXPECT_NEAR(mib(max_mem(t)), 40.0, 4.0);  // followed through /proc instead
}

TEST(RunTree, CgroupMembershipFollowsTheTreeLikeTheProcScan) {
  if (geteuid() != 0 || !std::filesystem::exists("/sys/fs/cgroup/memory/cgroup.procs")) {
    GTEST_SKIP() << "creating a cgroup needs root and a cgroup v1 memory hierarchy";
  }
  const TreePeaks p = alloc_tree_peaks({"--cgroup"});
  const double expected = 400.0 + mib(p.baseline);
  EXPECT_NEAR(mib(max_mem(p.loaded)), expected, 0.05 * expected);
}

}  // namespace
}  // namespace qprof::test
