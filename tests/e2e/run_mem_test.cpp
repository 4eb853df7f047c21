// SPDX-License-Identifier: Apache-2.0
// qprof run --mem SIZE: the tree in a memory cgroup of its own with that limit and no swap; the
// OOM kill it causes said with its process, limit and stage; refused where no cgroup can be had.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "e2e_util.hpp"
#include "qprof/analysis/dirs.hpp"
#include "qprof/analysis/peaks.hpp"
#include "qprof/analysis/timeline.hpp"
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

// How qprof learns of a kill: the kernel log names the victim; where it may not be read (no
// CAP_SYSLOG under dmesg_restrict, as in most containers) or says nothing (a log of its own),
// the group's oom_kill count and the tree's departed members name it.
enum class KernelLogIs { readable, unreadable, silent };

std::string log_name(const ::testing::TestParamInfo<KernelLogIs>& p) {
  switch (p.param) {
    case KernelLogIs::readable:
      return "LogReadable";
    case KernelLogIs::unreadable:
      return "LogUnreadable";
    case KernelLogIs::silent:
      return "LogSilent";
  }
  return "";
}

class RunMemKill : public ::testing::TestWithParam<KernelLogIs> {
 protected:
  void SetUp() override {
    std::string why;
    if (!can_make_memory_cgroups(why)) GTEST_SKIP() << why;
    if (GetParam() == KernelLogIs::unreadable && read_file("/proc/sys/kernel/dmesg_restrict").rfind('1', 0) != 0) {
      GTEST_SKIP() << "kernel.dmesg_restrict is 0: every process may read the kernel log";
    }
  }
  // qprof ARGS with the kernel log as the parameter says.
  Result qprof_with_log(const std::vector<std::string>& args) const {
    std::vector<std::string> argv;
    if (GetParam() == KernelLogIs::unreadable) argv = {"setpriv", "--inh-caps=-syslog", "--bounding-set=-syslog"};
    // A mount namespace of its own: /dev/kmsg there is /dev/null, which opens and says nothing.
    if (GetParam() == KernelLogIs::silent) {
      argv = {"unshare", "-m", "sh", "-c", "mount --bind /dev/null /dev/kmsg && exec \"$0\" \"$@\""};
    }
    argv.push_back(qprof_bin());
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
  }
  // The log names the victim; the count names the member it saw die, whose name qprof may not know.
  void expect_name(const trace::OomKill& k, const std::string& name) const {
    if (GetParam() == KernelLogIs::readable)
      EXPECT_EQ(k.name, name);
    else
      EXPECT_TRUE(k.name.empty() || k.name == name) << k.name;
    EXPECT_EQ(k.source, GetParam() == KernelLogIs::readable ? "kernel-log" : "cgroup");
  }
};

TEST_P(RunMemKill, TheTreeRunsUnderTheLimitAndTheKillIsExplained) {
  const std::string out = temp_dir() + "/mem.dat";
  // Two workers of 80 MiB each under 120 MiB: the second is killed while it touches its memory.
  const Result r =
      qprof_with_log({"run", "--mem", "120M", "-o", out, "--", workload("oom_workers"), "2", "80", "1000"});
  EXPECT_EQ(r.status, 0) << "the command's status (it waits for its workers and exits 0)\n" << r.err;
  const trace::Trace t = trace::read_trace(out);
  const auto limit = analysis::memory_limit(t);
  ASSERT_TRUE(limit);
  EXPECT_EQ(limit->bytes, 120 * kMiB);
  // Mostly one kill. On a loaded machine the kernel sometimes kills both: the second worker's
  // pages are charged before the first one's are freed (2 of about 20 runs of the suite).
  ASSERT_GE(t.oom_kills.size(), 1u) << r.err;
  ASSERT_LE(t.oom_kills.size(), 2u) << r.err;
  const std::string said = unwrapped(r.err);
  for (const trace::OomKill& k : t.oom_kills) {
    EXPECT_EQ(k.role, "worker");
    expect_name(k, "oom_workers");
    ASSERT_TRUE(k.limit);
    EXPECT_EQ(*k.limit, 120 * kMiB);
    ASSERT_TRUE(k.tree);
    EXPECT_LE(*k.tree, 121 * kMiB);
    EXPECT_NE(said.find("process " + std::to_string(k.pid) + " ("), std::string::npos) << r.err;
  }
  EXPECT_NE(said.find("qprof:   OOM kill        process " + std::to_string(t.oom_kills.front().pid) + " ("),
            std::string::npos)
      << r.err;
  // The footprint (the group's charge) never passes the limit.
  const auto fp = trace::footprint_of(t);
  ASSERT_TRUE(fp);
  EXPECT_LE(fp->peak, 120 * kMiB);
  EXPECT_NE(said.find("a worker) killed"), std::string::npos) << r.err;
  EXPECT_NE(said.find("limit of 120.0 MiB"), std::string::npos) << r.err;
  // The next request grows as VPA's does: max(120 + 100, 120 × 1.2) = 220 MiB.
  EXPECT_NE(said.find("--mem=220M"), std::string::npos) << r.err;
}

TEST_P(RunMemKill, AStageNamesWhereTheKillCame) {
  const std::string out = temp_dir() + "/stage.dat";
  // One process of 200 MiB under 100 MiB, killed within its stage; the shell goes on to end it.
  const Result r = qprof_with_log({"run", "--mem", "100M", "-o", out, "--", "sh", "-c",
                                   "echo 'QPROF_MARK: Load Start' >&2; " + workload("alloc_tree") +
                                       " 200 0 0 100; echo 'QPROF_MARK: Load End' >&2"});
  EXPECT_EQ(r.status, 0) << r.err;  // sh's status: the last echo's
  const trace::Trace t = trace::read_trace(out);
  ASSERT_EQ(t.oom_kills.size(), 1u) << r.err;
  const trace::OomKill& k = t.oom_kills.front();
  EXPECT_EQ(k.stage, "Load");
  expect_name(k, "alloc_tree");
  EXPECT_EQ(k.role, "worker") << "the shell lives on; the process it ran was killed";
  EXPECT_NE(k.pid, t.meta.root_pid);
  // What it held: at most the limit and the page tables, at least what a sample saw of it.
  ASSERT_TRUE(k.held);
  EXPECT_LE(*k.held, 104 * kMiB);
  EXPECT_GE(*k.held, 20 * kMiB);
  EXPECT_NE(unwrapped(r.err).find("in stage Load"), std::string::npos) << r.err;
}

// The command itself killed inside a stage it never ends: the stage runs to the trace's end, and
// holds the kill, its peak the footprint's (the limit reached), which the Peaks table places in it.
// The marker is taken before the growth (the sleep: stderr markers are read asynchronously); the
// last CGROUP record comes from the final stats pass after the tree is gone, before EXIT.
TEST(RunMem, AStageLeftOpenByAKillHoldsItsPeak) {
  std::string why;
  if (!can_make_memory_cgroups(why)) GTEST_SKIP() << why;
  const std::string out = temp_dir() + "/open_stage.dat";
  const Result r =
      run({qprof_bin(), "run", "--mem", "100M", "-o", out, "--", "sh", "-c",
           "echo 'QPROF_MARK: Load Start' >&2; sleep 0.3; exec " + workload("alloc_tree") + " 200 0 0 100"});
  EXPECT_EQ(r.status, 137) << r.err;
  const trace::Trace t = trace::read_trace(out);
  ASSERT_EQ(t.stages.size(), 1u);
  const trace::Stage& load = t.stages.front();
  EXPECT_FALSE(load.closed);
  ASSERT_TRUE(t.exit);
  EXPECT_DOUBLE_EQ(load.t_end, t.exit->t) << "a stage left open runs to the trace's end";
  const auto whole = analysis::find_peak(t, analysis::Metric::footprint);
  const auto in_load = analysis::stage_peak(t, analysis::Metric::footprint, "Load");
  ASSERT_TRUE(whole && in_load);
  EXPECT_GE(whole->bytes, 95 * kMiB) << "the limit was reached";
  EXPECT_EQ(in_load->bytes, whole->bytes);
  ASSERT_TRUE(whole->t);
  const auto stages = analysis::stages_at(t, *whole->t);
  ASSERT_EQ(stages.size(), 1u);
  EXPECT_EQ(stages.front()->name, "Load");
}

INSTANTIATE_TEST_SUITE_P(Kill, RunMemKill,
                         ::testing::Values(KernelLogIs::readable, KernelLogIs::unreadable, KernelLogIs::silent),
                         log_name);

TEST(RunMem, RefusedWithoutTheRightToMakeACgroup) {
  if (::geteuid() != 0) {
    const Result r = qprof({"run", "--mem", "100M", "--", "true"});
    EXPECT_EQ(r.status, 2) << r.err;
    EXPECT_NE(joined(r.err).find("--mem"), std::string::npos) << r.err;
    return;
  }
  const std::string qprof_copy = copy_for_other_users(qprof_bin());
  const std::string dir = fs::path(qprof_copy).parent_path().string();
  const Result r = run({"setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", qprof_copy, "run", "--mem",
                        "100M", "-o", dir + "/refused.dat", "--", "true"});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(joined(r.err).find("--mem 100.0 MiB: qprof cannot make a memory cgroup for the tree"), std::string::npos)
      << r.err;
  EXPECT_NE(joined(r.err).find("as root, or in a delegated cgroup v2 subtree"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir + "/refused.dat")) << "no trace of a run that did not happen";
}

TEST(RunMem, BadSizesAndCgroupOffAreUsageErrors) {
  Result r = qprof({"run", "--mem", "lots", "--", "true"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(joined(r.err).find("--mem: 'lots' is not a size"), std::string::npos) << r.err;
  r = qprof({"run", "--mem", "1G", "--cgroup", "off", "--", "true"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(joined(r.err).find("does not go with --cgroup off"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace qprof::test
