// SPDX-License-Identifier: Apache-2.0
// Shared memory is unreclaimable on every basis of the footprint. A job that writes 100 MiB of a
// MAP_SHARED anonymous mapping read by 3 children (shared_anon), or fills 100 MiB of /dev/shm
// (shm_fill): the kernel charges those pages to a cgroup as page cache and counts them as shmem,
// yet only swap could free them. On the tree's own cgroup (root, --cgroup on) the unreclaimable
// peak holds them and the page cache said to be droppable does not; on Σ PSS (root with --cgroup
// off, and as nobody) Pss_Shmem holds them. A job too short for the stats passes has its
// shared memory read as the charge rises.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "e2e_util.hpp"
#include "qprof/common/units.hpp"
#include "qprof/trace/footprint.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
namespace {
using trace::Footprint;

constexpr double kSharedMiB = 100;
// A process's PSS is given in KiB, rounded down: a few KiB short of the shared size over the 4
// processes. The workloads' own pages (stacks, libc's data) and the page cache of their files
// come to a few MiB.
constexpr double kPssRoundingMiB = 0.05, kOwnPagesMiB = 16;
constexpr int kTimeoutS = 60;

enum class As { cgroup, pss_root, pss_nobody };

bool can_make_cgroups() { return geteuid() == 0 && std::filesystem::exists("/sys/fs/cgroup/memory/cgroup.procs"); }

struct Recorded {
  Result result;
  trace::Trace trace;
  std::optional<Footprint> footprint;
};

// The workload `job` with its arguments, recorded as `as` says, with -v (the summary's split).
// As nobody, qprof and the workload are copies it may run, the trace goes to a directory it may
// write, and it runs in the test's own directory, which it may not.
Recorded record(As as, const std::string& job, const std::vector<std::string>& job_args) {
  const bool nobody = as == As::pss_nobody;
  const std::string qprof_path = nobody ? copy_for_other_users(qprof_bin()) : qprof_bin();
  const std::string dir = nobody ? std::filesystem::path(qprof_path).parent_path().string() : temp_dir();
  const std::string out = dir + "/" + job + "_" + std::to_string(static_cast<int>(as)) + ".dat";
  std::vector<std::string> argv{qprof_path, "run", "-v", "-o", out};
  if (nobody) argv.insert(argv.begin(), {"runuser", "-u", "nobody", "--"});
  if (!nobody) argv.insert(argv.end(), {"--cgroup", as == As::cgroup ? "on" : "off"});
  argv.push_back("--");
  argv.push_back(nobody ? copy_for_other_users(workload(job)) : workload(job));
  argv.insert(argv.end(), job_args.begin(), job_args.end());
  Recorded r{run(argv, "", kTimeoutS), {}, {}};
  EXPECT_EQ(r.result.status, 0) << r.result.err;
  r.trace = trace::read_trace(out);
  r.footprint = trace::footprint_of(r.trace);
  return r;
}

// The summary (-v) and the trace's footprint give the same unreclaimable figure.
void expect_summary_says(const Recorded& r, Bytes unreclaimable) {
  const std::string err = unwrapped(r.result.err);
  EXPECT_NE(err.find("of it at most " + human_bytes(unreclaimable) + " the kernel cannot drop"), std::string::npos)
      << err;
}

void expect_shared_memory_unreclaimable(As as, const std::string& job, const std::vector<std::string>& args) {
  const Recorded r = record(as, job, args);
  ASSERT_TRUE(r.footprint && r.footprint->unreclaimable) << r.result.err;
  const Footprint& f = *r.footprint;
  EXPECT_EQ(f.basis, as == As::cgroup ? Footprint::Basis::cgroup : Footprint::Basis::pss);
  const double unreclaimable = mib(*f.unreclaimable);
  EXPECT_GE(unreclaimable, kSharedMiB - kPssRoundingMiB) << r.result.err;
  EXPECT_LE(unreclaimable, kSharedMiB + kOwnPagesMiB) << r.result.err;
  EXPECT_LE(*f.unreclaimable, f.peak);
  expect_summary_says(r, *f.unreclaimable);
  if (as != As::cgroup) return;
  // The kernel's own count of the group's shared memory, in the trace: the figure holds it all.
  Bytes shmem = 0;
  for (const trace::CgroupSample& s : r.trace.cgroup) shmem = std::max(shmem, s.shmem.value_or(0));
  EXPECT_GE(mib(shmem), kSharedMiB) << "the CGROUP lines carry memory.stat's shmem";
  EXPECT_GE(*f.unreclaimable, shmem);
  // What is left of the page cache is the workload's files, not the shared memory.
  ASSERT_TRUE(f.reclaimable);
  EXPECT_LT(mib(*f.reclaimable), kOwnPagesMiB) << r.result.err;
  const std::string err = unwrapped(r.result.err);
  EXPECT_NE(err.find("page cache " + human_bytes(*f.reclaimable) + " at the peak, which it can drop"),
            std::string::npos)
      << err;
}

class SharedMemory : public ::testing::TestWithParam<As> {
 protected:
  void SetUp() override {
    if (GetParam() == As::cgroup && !can_make_cgroups())
      GTEST_SKIP() << "needs root and a cgroup v1 memory hierarchy to create the tree's group";
    if (GetParam() == As::pss_nobody && geteuid() != 0) GTEST_SKIP() << "switching to the user nobody needs root";
  }
};

TEST_P(SharedMemory, ASharedAnonymousMappingIsUnreclaimable) {
  expect_shared_memory_unreclaimable(GetParam(), "shared_anon", {"100", "3", "1000"});
}

TEST_P(SharedMemory, DevShmIsUnreclaimable) {
  expect_shared_memory_unreclaimable(GetParam(), "shm_fill", {"100", "1000"});
}

// Σ PSS while the sharing never rests: 100 MiB that the parent maps all along and 3 readers map
// and drop every 10 to 20 ms (shared_flux). The truth at every moment is 100 MiB and the tree's
// own few pages. A pass reads one process after another, so a reader that maps the pages between
// the parent's reading and its own counted them at the old shares and the new: up to 175 MiB,
// 129 to 185 MiB in 5 of 5 runs before passes were read around each member's resident size.
// Every PSS line stays within the truth (plus the kernel's per-CPU lag of the resident counts),
// and the peak reaches it. On the cgroup basis too: the PSS lines are recorded there as well.
// A reading that still moved after its sixth has its bound taken off and can read low. When
// only what a change added made a reading be taken again, one run in twelve failed with two busy
// loops on two cores (a peak of 73.8 MiB; once a line of 119 MiB, a reader that mapped and
// dropped within one reading); with what it left out as well, 24 of 24 passed there (18 of 18
// with that capped as now). It runs alone all the same (tests/CMakeLists.txt), as its figures
// assume; there the peak reads 100.5 MiB. It is held within 5 % of the truth, 10 % for a sanitized qprof (several times
// slower, so more of its readings move): far above what a bound taken off a still reading would
// leave (the pages held alone).
TEST_P(SharedMemory, SigmaPssOfASharingThatNeverRestsIsThePagesOnce) {
  constexpr double kLagMiB = 3;  // the tree's own pages, and resident counts that lag a batch
  const Recorded r = record(GetParam(), "shared_flux", {"100", "3", "2", "10"});
  ASSERT_GT(r.trace.pss.size(), 5u) << r.result.err;
  double most = 0;
  for (const trace::PssSample& s : r.trace.pss) {
    most = std::max(most, mib(s.pss));
    EXPECT_LE(mib(s.pss), kSharedMiB + kLagMiB) << "at " << s.t - r.trace.t0() << " s\n" << r.result.err;
    EXPECT_LE(s.unreclaimable.value_or(0), s.pss);
  }
  const double lowest = kSharedMiB * (sanitized() ? 0.90 : 0.95);
  EXPECT_GE(most, lowest) << "the peak reaches the pages once\n" << r.result.err;
}

// A job of a few hundredths of a second: 100 MiB of shared memory, held 20 ms. The stats passes
// (every 100 ms) miss it in about one run of four; the parts are read again at each rise of the
// charge by 1 MiB or 1 % too, so the unreclaimable peak comes within that step of the shared size.
TEST(SharedMemoryOnTheCgroup, AShortJobsSharedMemoryIsReadWhileItHoldsIt) {
  if (!can_make_cgroups()) GTEST_SKIP() << "needs root and a cgroup v1 memory hierarchy to create the tree's group";
  constexpr double kStepMiB = 1.01;
  for (int round = 0; round < 5; ++round) {
    const Recorded r = record(As::cgroup, "shared_anon", {"100", "0", "20"});
    ASSERT_TRUE(r.footprint && r.footprint->unreclaimable) << r.result.err;
    EXPECT_GE(mib(*r.footprint->unreclaimable), kSharedMiB - kStepMiB) << r.result.err;
  }
}

INSTANTIATE_TEST_SUITE_P(, SharedMemory, ::testing::Values(As::cgroup, As::pss_root, As::pss_nobody),
                         [](const auto& info) {
                           return info.param == As::cgroup     ? "Cgroup"
                                  : info.param == As::pss_root ? "PssAsRoot"
                                                               : "PssAsNobody";
                         });

}  // namespace
}  // namespace qprof::test
