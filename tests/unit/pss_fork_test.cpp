// SPDX-License-Identifier: Apache-2.0
// A tree that forks while Σ PSS is read: a child shares its parent's pages from its fork on, so
// the parent's PSS halves while the child is still unread. The pass reads the children of its
// members that the sampler thread has not seen yet, and a child forked during a reading is read
// into it, its share taken off as the most it can have added, and the pass read again.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "fake_proc.hpp"
#include "qprof/record/pss_pass.hpp"
#include "qprof/record/pss_sampler.hpp"

namespace qprof {
namespace {
using record::assemble_pss_pass;
using record::PssReading;
using record::ResidentKinds;

constexpr Bytes kMiB = Bytes{1} << 20;

// All of it anonymous: its anonymous memory is its RSS, its share of it its PSS.
proc::Rollup rollup(Bytes rss, Bytes pss, Bytes uss, Bytes unreclaimable) {
  return {rss, pss, uss, unreclaimable, true, rss, pss};
}
ResidentKinds anon(Bytes a) { return {a, 0, 0}; }

// A child read into the pass after its parent, read alone before the fork (200 MiB its own).
PssReading joined(Bytes rss, Bytes pss, Bytes uss) {
  return {rollup(rss, pss, uss, pss), std::nullopt, anon(rss), anon(rss), true};
}

// The parent, read before the fork, held its 200 MiB alone; the child, read after it, holds
// half of them: 300 MiB raw for 200 held. Its share of what it shares is taken off.
TEST(PssFork, AChildForkedAfterItsParentWasReadIsNotCountedTwice) {
  const std::vector<PssReading> pass{
      {rollup(200 * kMiB, 200 * kMiB, 200 * kMiB, 200 * kMiB), anon(200 * kMiB), anon(200 * kMiB)},
      joined(200 * kMiB, 100 * kMiB, 0)};
  const auto p = assemble_pss_pass(pass);
  EXPECT_EQ(p.counted, 2u);
  EXPECT_EQ(p.bound, 100 * kMiB);
  EXPECT_EQ(p.sum.pss, 200 * kMiB);
  EXPECT_EQ(p.sum.unreclaimable, 200 * kMiB);
  EXPECT_TRUE(p.moved()) << "read again, the child from the start";
}

// Four workers forked after the parent was read, each read at a fifth of the model and 10 MiB
// of its own: each can have added only its share (40 MiB), not half of what it maps.
TEST(PssFork, ManyChildrenTakeOffTheirSharesNotHalfOfWhatTheyMap) {
  std::vector<PssReading> pass{
      {rollup(200 * kMiB, 200 * kMiB, 200 * kMiB, 200 * kMiB), anon(200 * kMiB), anon(200 * kMiB)}};
  for (int i = 0; i < 4; ++i) pass.push_back(joined(210 * kMiB, 50 * kMiB, 10 * kMiB));
  const auto p = assemble_pss_pass(pass);
  EXPECT_EQ(p.bound, 160 * kMiB);
  EXPECT_EQ(p.sum.pss, 240 * kMiB) << "the model once and the workers' own pages";
  EXPECT_EQ(p.sum.uss, 240 * kMiB);
}

// A child forked before its parent's rollup (the parent read at the new share): its share taken
// off, the sum is held up by the parent's anonymous pages, which every sharer of them holds in
// the tree; the reading moved, and the pass is read again.
TEST(PssFork, AChildForkedBeforeItsParentWasReadMovesThePass) {
  const std::vector<PssReading> pass{
      {rollup(200 * kMiB, 100 * kMiB, 0, 100 * kMiB), anon(200 * kMiB), anon(200 * kMiB)},
      joined(200 * kMiB, 100 * kMiB, 0)};
  const auto p = assemble_pss_pass(pass);
  EXPECT_EQ(p.sum.pss, 200 * kMiB);
  EXPECT_EQ(p.sum.unreclaimable, 200 * kMiB);
  EXPECT_TRUE(p.moved());
  // Read again with the child a member from the start: nothing moved, nothing taken off.
  const std::vector<PssReading> again{
      {rollup(200 * kMiB, 100 * kMiB, 0, 100 * kMiB), anon(200 * kMiB), anon(200 * kMiB)},
      {rollup(200 * kMiB, 100 * kMiB, 0, 100 * kMiB), anon(200 * kMiB), anon(200 * kMiB)}};
  const auto q = assemble_pss_pass(again);
  EXPECT_FALSE(q.moved());
  EXPECT_EQ(q.sum.pss, 200 * kMiB);
  EXPECT_LT(q.motion(), p.motion()) << "the reading kept";
}

// The parent read after its fork had begun (its pages already shared), the child not yet to be
// seen: the members' Σ Pss_Anon is below the parent's anonymous memory. The sum is held at what
// the parent holds, and the reading is read again.
TEST(PssFork, ASharerUnreadLeavesAGapInTheAnonymousPages) {
  const std::vector<PssReading> pass{
      {rollup(200 * kMiB, 100 * kMiB, 0, 100 * kMiB), anon(200 * kMiB), anon(200 * kMiB)},
      {rollup(30 * kMiB, 30 * kMiB, 30 * kMiB, 30 * kMiB), anon(30 * kMiB), anon(30 * kMiB)}};
  const auto p = assemble_pss_pass(pass);
  EXPECT_EQ(p.anon_gap, 70 * kMiB) << "the parent's 200 MiB against 100 + 30";
  EXPECT_EQ(p.sum.pss, 200 * kMiB) << "what the parent holds";
  EXPECT_FALSE(p.moved()) << "the floor holds it; the sampler reads it again once, looking for the sharer";
  // Workers that left before their reading: the same gap, the same floor.
  const std::vector<PssReading> left{
      {rollup(210 * kMiB, 50 * kMiB, 10 * kMiB, 50 * kMiB), anon(210 * kMiB), anon(210 * kMiB)}};
  EXPECT_EQ(assemble_pss_pass(left).sum.pss, 210 * kMiB);
  // An attached tree: its root may share its anonymous pages with a parent outside the tree (a
  // forked worker attached to), so there is no floor, and no gap that reads it again.
  const auto attached = assemble_pss_pass(left, {.own = false});
  EXPECT_EQ(attached.anon_gap, 0u);
  EXPECT_EQ(attached.sum.pss, 50 * kMiB);
  // Pages KSM merged are not in `anon`: they may be shared outside the tree.
  const std::vector<PssReading> merged{
      {{100 * kMiB, 60 * kMiB, 20 * kMiB, 60 * kMiB, true, 20 * kMiB, 60 * kMiB}, anon(100 * kMiB), anon(100 * kMiB)}};
  EXPECT_EQ(assemble_pss_pass(merged).anon_gap, 0u);
  EXPECT_EQ(assemble_pss_pass(merged).sum.pss, 60 * kMiB);
}

// A child that shares nothing (it exec'd a small program at once) takes nothing off.
TEST(PssFork, AChildThatSharesNothingTakesNothingOff) {
  const std::vector<PssReading> pass{
      {rollup(200 * kMiB, 200 * kMiB, 200 * kMiB, 200 * kMiB), anon(200 * kMiB), anon(200 * kMiB)},
      joined(2 * kMiB, 2 * kMiB, 2 * kMiB)};
  const auto p = assemble_pss_pass(pass);
  EXPECT_EQ(p.bound, 0u);
  EXPECT_EQ(p.sum.pss, 202 * kMiB);
  EXPECT_FALSE(p.moved());
}

// A synthetic /proc: member 10 (the only one the sampler thread knows) forked 11, which forked
// 12 from a thread of its own; 20 is nobody's child of the tree. A pass reads 10, 11 and 12: 12
// once the anonymous pages' gap (10's 200 MiB against 100 + 50) has every thread looked at.
class PssSamplerChildren : public ::testing::Test {
 protected:
  void process(pid_t pid, Bytes rss, Bytes pss, Bytes uss, std::vector<std::pair<pid_t, std::string>> tasks) {
    proc_.add(pid, 1, 100);
    const std::filesystem::path dir = std::filesystem::path(proc_.root()) / std::to_string(pid);
    std::ofstream(dir / "smaps_rollup") << "00400000-7fff0000 ---p 00000000 00:00 0 [rollup]\nRss: " << rss / 1024
                                        << " kB\nPss: " << pss / 1024 << " kB\nPrivate_Dirty: " << uss / 1024
                                        << " kB\nPss_Anon: " << pss / 1024 << " kB\nAnonymous: " << rss / 1024
                                        << " kB\n";
    std::ofstream(dir / "status") << "Name:\tp\nRssAnon:\t" << rss / 1024 << " kB\nRssFile:\t0 kB\nRssShmem:\t0 kB\n"
                                  << "Threads:\t" << tasks.size() << "\n";
    for (const auto& [tid, children] : tasks) {
      std::filesystem::create_directories(dir / "task" / std::to_string(tid));
      std::ofstream(dir / "task" / std::to_string(tid) / "children") << children;
    }
  }
  // Member 10 alone, as the sampler thread knows the tree.
  static void give_member_10(record::PssSampler& sampler) {
    std::vector<record::Member> members(1);
    members[0].pid = 10;
    members[0].start_ticks = 100;
    sampler.set_members(members);
  }
  test::FakeProc proc_;
  WallAnchor clock_;
};

// Passes on the sampler's own schedule (a marker's pass reads only the members it was given): the
// results of `count` passes, waited for at most 5 s.
std::vector<trace::PssSample> scheduled(record::PssSampler& sampler, std::size_t count) {
  std::vector<trace::PssSample> got;
  for (int i = 0; i < 500 && got.size() < count; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    sampler.drain([&](const trace::PssSample& s) { got.push_back(s); });
  }
  return got;
}

TEST_F(PssSamplerChildren, APassReadsTheChildrenItsMembersForked) {
  process(10, 200 * kMiB, 100 * kMiB, 0, {{10, "11 "}});
  process(11, 200 * kMiB, 50 * kMiB, 10 * kMiB, {{11, ""}, {13, "12 "}});
  process(12, 200 * kMiB, 50 * kMiB, 10 * kMiB, {{12, ""}});
  process(20, 500 * kMiB, 500 * kMiB, 500 * kMiB, {{20, ""}});
  record::PssSampler sampler(proc_.root(), 0.02, clock_);
  give_member_10(sampler);
  const std::vector<trace::PssSample> got = scheduled(sampler, 2);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back().pss, 200 * kMiB) << "the parent's half and its children's quarters";
  EXPECT_EQ(got.back().uss, 20 * kMiB) << "each child's own 10 MiB: both were read";
}

// A child that no PID taken since the last look tells of (its PID taken just before that look,
// the child not yet linked to its parent then): the parent's anonymous pages read at half, the
// pass looks at the children again and reads the child into a new reading.
TEST_F(PssSamplerChildren, AGapInTheAnonymousPagesLooksForChildrenAgain) {
  process(10, 200 * kMiB, 200 * kMiB, 200 * kMiB, {{10, ""}});
  record::PssSampler sampler(proc_.root(), 0.02, clock_);
  give_member_10(sampler);
  ASSERT_GE(scheduled(sampler, 2).size(), 2u);  // the look after the first one, with no PID taken since
  process(10, 200 * kMiB, 100 * kMiB, 0, {{10, "11"}});
  process(11, 200 * kMiB, 100 * kMiB, 5 * kMiB, {{11, ""}});
  const std::vector<trace::PssSample> got = scheduled(sampler, 2);
  ASSERT_FALSE(got.empty());
  EXPECT_EQ(got.back().pss, 200 * kMiB);
  EXPECT_EQ(got.back().uss, 5 * kMiB) << "the child read: its own 5 MiB";
  EXPECT_EQ(sampler.rereads(), 1u) << "read again once, the child with it";
}

}  // namespace
}  // namespace qprof
