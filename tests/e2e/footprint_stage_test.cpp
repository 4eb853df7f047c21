// SPDX-License-Identifier: Apache-2.0
// The footprint per stage: a 150 ms spike inside stage A, sampled once a second (-i 1), is A's
// footprint peak and not B's; stage B, which holds 100 MiB from its start to its end, reads that
// at both markers. On the tree's own cgroup (the kernel's peak counter, read and reset at each
// marker: exact, timed by the records of the charge) and on Σ PSS (read every 100 ms: sampled), as
// root and as an ordinary user.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "e2e_util.hpp"
#include "qprof/analysis/peaks.hpp"
#include "qprof/trace/footprint.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
namespace {
using analysis::Metric;
using analysis::StageStats;

constexpr double kSpikeMiB = 300, kHeldMiB = 100;

enum class Path { cgroup, pss_root, pss_nobody };

trace::Trace record(Path path, Result& result) {
  const std::string job =
      path == Path::pss_nobody ? copy_for_other_users(workload("stage_spike")) : workload("stage_spike");
  const std::string dir = path == Path::pss_nobody
                              ? std::filesystem::path(copy_for_other_users(qprof_bin())).parent_path().string()
                              : temp_dir();
  const std::string out = dir + "/stage_spike_" + std::to_string(static_cast<int>(path)) + ".dat";
  std::vector<std::string> argv;
  if (path == Path::pss_nobody) {
    argv = {"runuser", "-u", "nobody", "--", dir + "/qprof", "run"};
  } else {
    argv = {qprof_bin(), "run", "--cgroup", path == Path::cgroup ? "on" : "off"};
  }
  for (const std::string a : {"-i", "1", "-o", out.c_str(), "--", job.c_str(), "300", "150", "100", "1500"})
    argv.push_back(a);
  result = run(argv);
  EXPECT_EQ(result.status, 0) << result.err;
  return trace::read_trace(out);
}

const StageStats* stage(const std::vector<StageStats>& stats, const std::string& name) {
  for (const StageStats& s : stats) {
    if (s.stage.name == name) return &s;
  }
  return nullptr;
}

void expect_spike_in_its_own_stage(Path path) {
  Result r;
  const trace::Trace t = record(path, r);
  const std::vector<StageStats> stats = analysis::stage_stats(t, Metric::footprint);
  const StageStats* a = stage(stats, "A");
  const StageStats* b = stage(stats, "B");
  ASSERT_TRUE(a && b && a->peak && b->peak) << r.err;
  // The process's own pages (a few MiB) come on top of what it touched.
  EXPECT_GE(mib(a->peak->bytes), kSpikeMiB) << r.err;
  EXPECT_LE(mib(a->peak->bytes), kSpikeMiB + 16) << r.err;
  // Timed inside A on every path: sampled, or on the cgroup when the kernel's high-water column
  // first stood at the peak (at the latest A's end marker, which writes a record of the charge).
  ASSERT_TRUE(a->peak->t) << "A's peak has no moment";
  EXPECT_GE(*a->peak->t, a->stage.t_start - 1e-3);
  EXPECT_LE(*a->peak->t, a->stage.t_end + 1e-3);
  EXPECT_GE(mib(b->peak->bytes), kHeldMiB) << r.err;
  EXPECT_LE(mib(b->peak->bytes), kHeldMiB + 16) << "the spike ended 300 ms before A did";
  ASSERT_TRUE(b->at_start && b->at_end);
  EXPECT_GE(mib(*b->at_start), kHeldMiB) << "read at the marker itself";
  EXPECT_GE(mib(*b->at_end), kHeldMiB);
  EXPECT_NEAR(mib(*b->at_end), mib(*b->at_start), 4.0);
  if (path == Path::cgroup) {
    EXPECT_TRUE(a->peak->exact) << "the kernel's counter, read and reset at each marker";
    EXPECT_TRUE(b->peak->exact);
    EXPECT_FALSE(t.cgroup_windows.empty());
    // A reading of the charge with every sample, not every 100 ms.
    EXPECT_GE(t.cgroup.size(), t.mem.size());
  }
}

TEST(FootprintStages, TheKernelsPeakPerStageOnTheTreesCgroup) {
  if (geteuid() != 0 || !std::filesystem::exists("/sys/fs/cgroup/memory/cgroup.procs")) {
    GTEST_SKIP() << "needs root and a cgroup v1 memory hierarchy to create the tree's group";
  }
  expect_spike_in_its_own_stage(Path::cgroup);
}

TEST(FootprintStages, SampledPssPerStageAsRootWithoutACgroup) { expect_spike_in_its_own_stage(Path::pss_root); }

TEST(FootprintStages, SampledPssPerStageAsAnOrdinaryUser) {
  if (geteuid() != 0) GTEST_SKIP() << "switching to the user nobody needs root";
  expect_spike_in_its_own_stage(Path::pss_nobody);
}

}  // namespace
}  // namespace qprof::test
