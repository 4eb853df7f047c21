// SPDX-License-Identifier: Apache-2.0
// The footprint of a parent that forks workers while it holds its memory: every worker shares the
// parent's pages from its fork on, so the parent's PSS falls at each fork, and a PSS reading that
// counts the parent but not a worker just forked reads the pages at half. From the first fork on
// the tree holds them all, and no reading may be below them. Run as an ordinary user (no cgroup:
// the footprint is Σ PSS) and as root with --cgroup off.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "e2e_util.hpp"
#include "qprof/trace/footprint.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
namespace {

// fork_holder holds this much from before its first marker to its last (private pages, or shared
// memory), and forks kWorkers.
constexpr double kHeldMiB = 128;
constexpr int kWorkers = 4;

enum class As { nobody, root_without_cgroup };

struct OtherUserFiles {
  std::string dir, qprof, fork_holder, vfork_window;
};

const OtherUserFiles& other_user_files() {
  static const OtherUserFiles files = [] {
    OtherUserFiles f{"", copy_for_other_users(qprof_bin()), copy_for_other_users(workload("fork_holder")),
                     copy_for_other_users(workload("vfork_window"))};
    f.dir = std::filesystem::path(f.qprof).parent_path().string();
    return f;
  }();
  return files;
}

std::optional<Seconds> marker_at(const trace::Trace& t, const std::string& label) {
  for (const auto& m : t.markers)
    if (m.label == label) return m.t;
  return std::nullopt;
}

// The trace of `job ARGS` recorded as `as` says; the job's stderr in `err`.
trace::Trace record(As as, const std::string& job, const std::vector<std::string>& args, std::string& err) {
  const OtherUserFiles& f = other_user_files();
  const std::string out =
      f.dir + "/" + std::filesystem::path(job).filename().string() + (as == As::nobody ? "_nobody" : "_root") + ".dat";
  std::vector<std::string> argv;
  if (as == As::nobody)
    argv = {"runuser", "-u", "nobody", "--", f.qprof, "run", "-o", out, "--", job};
  else
    argv = {qprof_bin(), "run", "--cgroup", "off", "-o", out, "--", job};
  argv.insert(argv.end(), args.begin(), args.end());
  const Result r = run(argv);
  err = r.err;
  EXPECT_EQ(r.status, 0) << r.err;
  return trace::read_trace(out);
}

// Every PSS reading of `t` between the markers `from` and `to` holds `held` MiB once: not below
// (the kernel counts each process's PSS in whole KiB: a few KiB under the pages at most), nor
// above by more than the processes' own few pages. Returns how many there were.
std::size_t expect_held_between(const trace::Trace& t, const std::string& from, const std::string& to, double held,
                                const std::string& err) {
  const auto start = marker_at(t, from), end = marker_at(t, to);
  EXPECT_TRUE(start && end) << err;
  if (!start || !end) return 0;
  std::size_t readings = 0;
  for (const auto& p : t.pss) {
    if (p.t < *start || p.t > *end) continue;
    ++readings;
    EXPECT_GE(mib(p.pss), held - 0.1) << "at " << p.t - *start << " s after " << from << "\n" << err;
    EXPECT_LE(mib(p.pss), held + 4) << "at " << p.t - *start << " s after " << from << "\n" << err;
  }
  return readings;
}

class FootprintAcrossForks : public ::testing::TestWithParam<As> {
 protected:
  void SetUp() override {
    if (GetParam() == As::nobody && geteuid() != 0) GTEST_SKIP() << "switching to the user nobody needs root";
  }
};

// Each marker asks for a PSS reading at once, as the worker is being forked: the reading the
// parent's fork races with. The workers fork 150 ms apart, so that the scheduled readings and
// those of Σ RSS's new highs fall between forks as well.
TEST_P(FootprintAcrossForks, NoReadingAfterTheFirstForkIsBelowWhatTheParentHolds) {
  std::string err;
  const trace::Trace t = record(GetParam(), other_user_files().fork_holder,
                                {std::to_string(static_cast<int>(kHeldMiB)), std::to_string(kWorkers), "150"}, err);
  if (HasFatalFailure()) return;
  // The workers' own pages are a few KiB each.
  const std::size_t readings = expect_held_between(t, "Fork 1", "Hold End", kHeldMiB, err);
  EXPECT_GE(readings, static_cast<std::size_t>(kWorkers)) << "one at each marker at least\n" << err;
}

// The same with the pages held as shared memory (MAP_SHARED, as a pool's shared buffer or torch's
// shared tensors): no anonymous pages hold the sum up, so each reading must count every worker,
// the one being forked too, and no more than once. A worker found late left the marker's reading
// 7-16 MiB short; one mapping its pages during a reading had the bound take off more than it added.
TEST_P(FootprintAcrossForks, NoReadingAfterTheFirstForkIsBelowTheSharedMemoryHeld) {
  std::string err;
  const trace::Trace t =
      record(GetParam(), other_user_files().fork_holder,
             {std::to_string(static_cast<int>(kHeldMiB)), std::to_string(kWorkers), "150", "shared"}, err);
  if (HasFatalFailure()) return;
  const std::size_t readings = expect_held_between(t, "Fork 1", "Hold End", kHeldMiB, err);
  EXPECT_GE(readings, static_cast<std::size_t>(kWorkers)) << "one at each marker at least\n" << err;
}

// A vfork child (as posix_spawn starts one: Python's subprocess, glibc's system) runs in its
// parent's address space until it execs, and its smaps_rollup is then its parent's: both read
// would count the parent's pages twice. vfork_window holds the child there 1.5 s, through a
// marker's reading and scheduled ones.
TEST_P(FootprintAcrossForks, AVforkChildInItsParentsMemoryIsNotCountedAgain) {
  constexpr double kWindowMiB = 128;
  std::string err;
  const trace::Trace t =
      record(GetParam(), other_user_files().vfork_window, {std::to_string(static_cast<int>(kWindowMiB)), "1500"}, err);
  if (HasFatalFailure()) return;
  // The parent's other pages (its text, stack, libc's share) are well under a MiB.
  const std::size_t readings = expect_held_between(t, "Window Start", "Window End", kWindowMiB, err);
  EXPECT_GE(readings, 2u) << "the marker's reading and a scheduled one at least\n" << err;
}

INSTANTIATE_TEST_SUITE_P(Both, FootprintAcrossForks, ::testing::Values(As::nobody, As::root_without_cgroup),
                         [](const auto& info) { return info.param == As::nobody ? "Nobody" : "RootCgroupOff"; });

}  // namespace
}  // namespace qprof::test
