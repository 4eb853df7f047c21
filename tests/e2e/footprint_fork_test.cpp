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

// fork_holder holds this much from before its first marker to its last, and forks kWorkers.
constexpr double kHeldMiB = 128;
constexpr int kWorkers = 4;

enum class As { nobody, root_without_cgroup };

struct OtherUserFiles {
  std::string dir, qprof, fork_holder;
};

const OtherUserFiles& other_user_files() {
  static const OtherUserFiles files = [] {
    OtherUserFiles f{"", copy_for_other_users(qprof_bin()), copy_for_other_users(workload("fork_holder"))};
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

class FootprintAcrossForks : public ::testing::TestWithParam<As> {};

// Each marker asks for a PSS reading at once, as the worker is being forked: the reading the
// parent's fork races with. The workers fork 150 ms apart, so that the scheduled readings and
// those of Σ RSS's new highs fall between forks as well.
TEST_P(FootprintAcrossForks, NoReadingAfterTheFirstForkIsBelowWhatTheParentHolds) {
  const As as = GetParam();
  if (as == As::nobody && geteuid() != 0) GTEST_SKIP() << "switching to the user nobody needs root";
  const OtherUserFiles& f = other_user_files();
  const std::string out = f.dir + "/fork_holder" + (as == As::nobody ? "_nobody" : "_root") + ".dat";
  const std::vector<std::string> job{f.fork_holder, std::to_string(static_cast<int>(kHeldMiB)),
                                     std::to_string(kWorkers), "150"};
  std::vector<std::string> argv;
  if (as == As::nobody)
    argv = {"runuser", "-u", "nobody", "--", f.qprof, "run", "-o", out, "--"};
  else
    argv = {qprof_bin(), "run", "--cgroup", "off", "-o", out, "--"};
  argv.insert(argv.end(), job.begin(), job.end());
  const Result r = run(argv);
  ASSERT_EQ(r.status, 0) << r.err;
  const trace::Trace t = trace::read_trace(out);
  const auto first_fork = marker_at(t, "Fork 1"), end = marker_at(t, "Hold End");
  ASSERT_TRUE(first_fork && end) << r.err;
  std::size_t readings = 0;
  for (const auto& p : t.pss) {
    if (p.t < *first_fork || p.t > *end) continue;
    ++readings;
    // The kernel counts each process's PSS in whole KiB: a few KiB below the pages at most.
    EXPECT_GE(mib(p.pss), kHeldMiB - 0.1) << "at " << p.t - *first_fork << " s after the first fork\n" << r.err;
    // And the pages once: the workers' own pages are a few KiB each.
    EXPECT_LE(mib(p.pss), kHeldMiB + 4) << "at " << p.t - *first_fork << " s after the first fork\n" << r.err;
  }
  EXPECT_GE(readings, static_cast<std::size_t>(kWorkers)) << "one at each marker at least\n" << r.err;
}

INSTANTIATE_TEST_SUITE_P(Both, FootprintAcrossForks, ::testing::Values(As::nobody, As::root_without_cgroup),
                         [](const auto& info) { return info.param == As::nobody ? "Nobody" : "RootCgroupOff"; });

}  // namespace
}  // namespace qprof::test
