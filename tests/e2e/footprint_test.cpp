// SPDX-License-Identifier: Apache-2.0
// The summary's answer: the tree's footprint, shared pages counted once, on both of its bases
// (the tree's own cgroup charge; Σ PSS), against workloads whose truth is known by construction.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "e2e_util.hpp"
#include "qprof/trace/footprint.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using trace::Footprint;
using trace::footprint_of;
using trace::Trace;

namespace {

bool can_make_cgroups() { return geteuid() == 0 && std::filesystem::exists("/sys/fs/cgroup/memory/cgroup.procs"); }

struct Recorded {
  Result result;
  Trace trace;
};

Recorded record(const std::string& name, const std::vector<std::string>& options, const std::vector<std::string>& job) {
  const std::string out = temp_dir() + "/" + name + ".dat";
  std::vector<std::string> args{"run", "-o", out};
  args.insert(args.end(), options.begin(), options.end());
  args.push_back("--");
  args.insert(args.end(), job.begin(), job.end());
  Recorded r{qprof(args), {}};
  EXPECT_EQ(r.result.status, 0) << r.result.err;
  r.trace = trace::read_trace(out);
  return r;
}

// The parent's 200 MiB once and each of 4 workers' own 50 MiB: 400 MiB; Σ RSS counts the
// shared 200 MiB in each worker too: 1200 MiB. Each above a run of the same processes with
// nothing touched (their libraries and stacks).
constexpr double kTruthMiB = 200 + 4 * 50, kRssMiB = 200 + 4 * (200 + 50);

void expect_shared_pages_once(const std::string& cgroup, Footprint::Basis basis) {
  const Recorded base =
      record("workers_base_" + cgroup, {"--cgroup", cgroup}, {workload("shared_workers"), "0", "4", "0", "1500"});
  const Recorded full =
      record("workers_" + cgroup, {"--cgroup", cgroup}, {workload("shared_workers"), "200", "4", "50", "1500"});
  const auto fb = footprint_of(base.trace), ff = footprint_of(full.trace);
  ASSERT_TRUE(fb && ff) << full.result.err;
  EXPECT_EQ(ff->basis, basis);
  EXPECT_NEAR(mib(ff->peak) - mib(fb->peak), kTruthMiB, kTruthMiB * 0.03) << full.result.err;
  EXPECT_NEAR(mib(max_mem(full.trace)) - mib(max_mem(base.trace)), kRssMiB, kRssMiB * 0.03);
  ASSERT_TRUE(ff->unreclaimable && fb->unreclaimable);
  EXPECT_NEAR(mib(*ff->unreclaimable) - mib(*fb->unreclaimable), kTruthMiB, kTruthMiB * 0.03);
  // The summary's first figure is the footprint, Σ RSS second and named for what it counts.
  const std::string err = unwrapped(full.result.err);
  const std::size_t second_line = err.find('\n') + 1;
  EXPECT_EQ(err.compare(second_line, 18, "qprof:   footprint"), 0) << err;
  EXPECT_LT(err.find("footprint"), err.find("Σ RSS")) << err;
  EXPECT_NE(err.find("a page shared by N processes counts N times"), std::string::npos) << err;
}

TEST(Footprint, SharedWorkersCountTheirSharedPagesOnceByPss) { expect_shared_pages_once("off", Footprint::Basis::pss); }

TEST(Footprint, SharedWorkersCountTheirSharedPagesOnceByTheCgroupCharge) {
  if (!can_make_cgroups()) GTEST_SKIP() << "needs root and a cgroup v1 memory hierarchy to create the tree's group";
  expect_shared_pages_once("on", Footprint::Basis::cgroup);
}

// With a long interval the cgroup's parts (memory.stat) are read at the start and after the exit
// only: the summary and the report said "0 B unreclaimable" and "reclaimable at peak 16 KiB" for a
// 100 MiB heap. The PSS passes, on their own schedule, saw it.
TEST(Footprint, ALongIntervalStillGivesTheUnreclaimablePart) {
  if (!can_make_cgroups()) GTEST_SKIP() << "a cgroup of the tree's own needs root and cgroup v1's memory controller";
  // No marker: nothing but the interval asks for a sample while the heap is held.
  const Recorded r = record("long_interval", {"--cgroup", "on", "-i", "60"},
                            {debian_python(), "-c",
                             "b = bytearray(100 << 20)\nfor i in range(0, len(b), 4096): b[i] = 1\n"
                             "import time; time.sleep(0.3)"});
  const auto f = footprint_of(r.trace);
  ASSERT_TRUE(f) << r.result.err;
  EXPECT_EQ(f->basis, Footprint::Basis::cgroup);
  ASSERT_TRUE(f->unreclaimable);
  EXPECT_GE(mib(*f->unreclaimable), 100.0) << r.result.err;
  EXPECT_LE(*f->unreclaimable, f->peak);
  EXPECT_FALSE(f->reclaimable) << "no page cache was read near the peak";
  const std::string err = unwrapped(r.result.err);
  EXPECT_EQ(err.find("0 B unreclaimable"), std::string::npos) << err;
  EXPECT_NE(err.find(" MiB unreclaimable"), std::string::npos) << err;
}

TEST(Footprint, CgroupAutoGivesTheTreeAGroupWhereQprofMayCreateOne) {
  const Recorded automatic = record("auto_cgroup", {}, {"true"});
  const Recorded off = record("no_cgroup", {"--cgroup", "off"}, {"true"});
  EXPECT_EQ(off.trace.meta.other.count("cgroup"), 0u);
  EXPECT_TRUE(off.trace.cgroup.empty());
  if (!can_make_cgroups()) {
    EXPECT_EQ(automatic.trace.meta.other.count("cgroup"), 0u);
    EXPECT_EQ(joined(automatic.result.err).find("cannot create"), std::string::npos)
        << "auto says why not only under -v";
    GTEST_SKIP() << "no right to create cgroups here: auto falls back to Σ PSS";
  }
  EXPECT_EQ(automatic.trace.meta.other.count("cgroup"), 1u) << automatic.result.err;
  EXPECT_FALSE(automatic.trace.cgroup.empty());
}

TEST(Footprint, APssPassIsTakenAtANewHighSoAOneSecondSpikeIsCaught) {
  // A 0.5 s pass interval would see the 1 s spike at best twice; the passes taken at Σ RSS's
  // new highs read it while it is at its height.
  const Recorded base =
      record("spike_base", {"--cgroup", "off", "--pss-interval", "0.5"}, {workload("spike"), "0", "1000", "300"});
  const Recorded full = record("spike_pss", {"-v", "--cgroup", "off", "--pss-interval", "0.5"},
                               {workload("spike"), "200", "1000", "300"});
  const auto fb = footprint_of(base.trace), ff = footprint_of(full.trace);
  ASSERT_TRUE(fb && ff);
  EXPECT_NEAR(mib(ff->peak) - mib(fb->peak), 200.0, 10.0) << full.result.err;
  EXPECT_NE(full.result.err.find("new high"), std::string::npos) << full.result.err;
}

// A job of a tenth of a second: one process that touches 64 MiB, holds it 50 ms and exits. It
// shares nothing, so its footprint is its RSS but for the libraries' shared pages: a PSS pass at
// its new high must come within the first 100 ms, not after the pages are gone.
TEST(Footprint, AShortJobsPeakIsReadWhileItHoldsIt) {
  for (int round = 0; round < 3; ++round) {
    const Recorded r =
        record("short_" + std::to_string(round), {"--cgroup", "off"}, {workload("alloc_tree"), "64", "0", "0", "50"});
    const auto f = footprint_of(r.trace);
    ASSERT_TRUE(f) << r.result.err;
    EXPECT_GE(mib(f->peak), 64.0) << r.result.err;
    EXPECT_LE(mib(f->peak), mib(max_mem(r.trace)) + 0.5) << r.result.err;
  }
}

TEST(Footprint, NoPssLeavesTheTraceWithoutPssAndTheSummaryWithoutAFootprint) {
  const Recorded r = record("no_pss", {"--cgroup", "off", "--no-pss"}, {"true"});
  EXPECT_TRUE(r.trace.pss.empty());
  EXPECT_EQ(r.result.err.find("footprint"), std::string::npos) << r.result.err;
}

TEST(Footprint, TheSummarySaysTheCommandsExitStatus) {
  const Result r = qprof({"run", "-o", temp_dir() + "/exit3.dat", "--", workload("exit_with"), "3"});
  EXPECT_EQ(r.status, 3);
  EXPECT_NE(r.err.find("exit status 3"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace qprof::test
