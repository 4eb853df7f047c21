// SPDX-License-Identifier: Apache-2.0
// The spacing of the PSS passes asked by new highs of Σ RSS: close at a job's start, where a short
// job reaches its peak and ends, a tenth of a second once it has run a second.
#include "qprof/record/pss_sampler.hpp"

#include <gtest/gtest.h>

namespace qprof {
using record::PssSampler;
namespace {

using std::chrono::milliseconds;

TEST(PssSampler, NewHighsAreReadSoonerAtAJobsStart) {
  EXPECT_EQ(PssSampler::rise_spacing(milliseconds(0)), milliseconds(10));
  EXPECT_EQ(PssSampler::rise_spacing(milliseconds(60)), milliseconds(10));
  EXPECT_EQ(PssSampler::rise_spacing(milliseconds(500)), milliseconds(50));
  EXPECT_EQ(PssSampler::rise_spacing(milliseconds(1000)), milliseconds(100));
  EXPECT_EQ(PssSampler::rise_spacing(std::chrono::hours(5)), milliseconds(100));
}

}  // namespace
}  // namespace qprof

// A pass put together from its readings: the members' resident sizes around it bound what a
// change of sharing during it added (half a page per shared page a member mapped or dropped, the
// first one read never by mapping, the last never by dropping), and that bound is taken off.
namespace qprof {
namespace {
using record::assemble_pss_pass;
using record::PssReading;
using record::ResidentKinds;

constexpr Bytes kMiB = Bytes{1} << 20;

proc::Rollup rollup(Bytes rss, Bytes pss, Bytes uss, Bytes unreclaimable) {
  return {rss, pss, uss, unreclaimable, true};
}
ResidentKinds anon(Bytes a) { return {a, 0, 0}; }
ResidentKinds shmem(Bytes s, Bytes a = 0) { return {a, 0, s}; }
ResidentKinds file(Bytes f, Bytes a = 0) { return {a, f, 0}; }

TEST(PssPass, AStillTreeIsItsSum) {
  const std::vector<PssReading> still{
      {rollup(100 * kMiB, 50 * kMiB, 10 * kMiB, 45 * kMiB), shmem(90 * kMiB, 10 * kMiB), shmem(90 * kMiB, 10 * kMiB)},
      {rollup(80 * kMiB, 40 * kMiB, 0, 40 * kMiB), shmem(80 * kMiB), shmem(80 * kMiB)}};
  const auto p = assemble_pss_pass(still);
  EXPECT_EQ(p.sum.pss, 90 * kMiB);
  EXPECT_EQ(p.sum.uss, 10 * kMiB);
  EXPECT_EQ(p.sum.unreclaimable, 85 * kMiB);
  EXPECT_EQ(p.bound, 0u);
  EXPECT_EQ(p.counted, 2u);
  EXPECT_FALSE(p.moved());
}

// The case of the e2e test that failed under load: the parent read first holding 100 MiB alone,
// then 3 readers read after they mapped all of it. Raw, 100 + 3 × 25 = 175 MiB; the truth at
// every moment, 100 MiB.
TEST(PssPass, ReadersThatMappedASharedBufferDuringThePassAreNotCountedTwice) {
  std::vector<PssReading> pass{
      {rollup(100 * kMiB, 100 * kMiB, 100 * kMiB, 100 * kMiB), shmem(100 * kMiB), shmem(100 * kMiB)}};
  for (int i = 0; i < 3; ++i)
    pass.push_back({rollup(100 * kMiB, 25 * kMiB, 0, 25 * kMiB), shmem(0), shmem(100 * kMiB)});
  const auto p = assemble_pss_pass(pass);
  EXPECT_EQ(p.bound, 150 * kMiB);
  EXPECT_EQ(p.sum.pss, 100 * kMiB) << "175 less the bound, 25, is below the pages held alone";
  EXPECT_EQ(p.sum.unreclaimable, 100 * kMiB);
  EXPECT_TRUE(p.moved()) << "read again";
}

// A member's new anonymous pages are its own: nothing is taken off, whatever it shares besides.
// Pages it maps from a file count in Σ PSS's bound, not in the unreclaimable part's.
TEST(PssPass, AMemberThatGrowsPrivatelyIsNotCut) {
  const std::vector<PssReading> growing{
      {rollup(10 * kMiB, 8 * kMiB, 6 * kMiB, 7 * kMiB), file(4 * kMiB, 6 * kMiB), file(4 * kMiB, 6 * kMiB)},
      {rollup(1060 * kMiB, 560 * kMiB, 60 * kMiB, 560 * kMiB), shmem(1000 * kMiB, 40 * kMiB),
       shmem(1000 * kMiB, 60 * kMiB)}};
  const auto p = assemble_pss_pass(growing);
  EXPECT_EQ(p.bound, 0u);
  EXPECT_EQ(p.sum.pss, 568 * kMiB);
  const std::vector<PssReading> mapping{
      {rollup(10 * kMiB, 8 * kMiB, 6 * kMiB, 7 * kMiB), file(4 * kMiB, 6 * kMiB), file(4 * kMiB, 6 * kMiB)},
      {rollup(60 * kMiB, 40 * kMiB, 30 * kMiB, 30 * kMiB), file(10 * kMiB, 30 * kMiB), file(30 * kMiB, 30 * kMiB)}};
  const auto m = assemble_pss_pass(mapping);
  EXPECT_EQ(m.bound, 10 * kMiB) << "20 MiB of a file mapped, after the first member was read: half";
  EXPECT_EQ(m.unreclaimable_bound, 0u) << "file pages are not in the unreclaimable part";
  EXPECT_EQ(m.sum.unreclaimable, 37 * kMiB);
}

// The first member read cannot overshoot by mapping (nobody was read before it), the last one
// cannot by dropping (nobody after it).
TEST(PssPass, TheReadOrderBoundsWhoCanOvershoot) {
  const std::vector<PssReading> pass{
      {rollup(100 * kMiB, 50 * kMiB, 0, 50 * kMiB), shmem(0), shmem(100 * kMiB)},             // maps, read first
      {rollup(100 * kMiB, 50 * kMiB, 0, 50 * kMiB), shmem(100 * kMiB), shmem(100 * kMiB)},    // still
      {rollup(100 * kMiB, 50 * kMiB, 0, 50 * kMiB), shmem(100 * kMiB), shmem(0, 1 * kMiB)}};  // drops, read last
  const auto p = assemble_pss_pass(pass);
  EXPECT_EQ(p.bound, 0u);
  EXPECT_EQ(p.sum.pss, 150 * kMiB);
}

// The other way: a reader that dropped the buffer after the parent was read and before its own
// rollup (the parent counted the pages shared with it) leaves them half out: 62 MiB for 101.
// Nothing could have been added, but the reading moved: it is read again, as one that added.
TEST(PssPass, AMemberThatDroppedBeforeItsOwnReadingMovedTheOtherWay) {
  std::vector<PssReading> pass{
      {rollup(101 * kMiB, 51 * kMiB, 1 * kMiB, 50 * kMiB), shmem(100 * kMiB), shmem(100 * kMiB), shmem(100 * kMiB)},
      {rollup(22 * kMiB, 11 * kMiB, 0, 11 * kMiB), shmem(100 * kMiB), shmem(20 * kMiB), shmem(22 * kMiB)}};
  auto p = assemble_pss_pass(pass);
  EXPECT_EQ(p.bound, 0u);
  EXPECT_EQ(p.missed, 39 * kMiB) << "78 MiB dropped before its rollup: half a page each";
  EXPECT_EQ(p.sum.pss, 62 * kMiB) << "left as read: only what a change added is taken off";
  EXPECT_TRUE(p.moved());
  pass[1].at.reset();
  EXPECT_EQ(assemble_pss_pass(pass).missed, 40 * kMiB) << "unknown when: the whole pass's 80 MiB";
  // The first member read has no member before it: its drops leave nothing out.
  std::swap(pass[0], pass[1]);
  EXPECT_EQ(assemble_pss_pass(pass).missed, 0u);
}

// Mapped after its own rollup, by a member read before another: left out of that one, as far as
// what the members read after it share; the last member read has no member after it.
TEST(PssPass, AMemberThatMappedAfterItsOwnReadingLeftOutWhatTheOthersShare) {
  std::vector<PssReading> mapping{
      {rollup(101 * kMiB, 100 * kMiB, 1 * kMiB, 100 * kMiB), shmem(100 * kMiB), shmem(100 * kMiB), shmem(100 * kMiB)},
      {rollup(1 * kMiB, 1 * kMiB, 1 * kMiB, 0), shmem(0, 1 * kMiB), shmem(60 * kMiB, 1 * kMiB), shmem(0, 1 * kMiB)},
      {rollup(101 * kMiB, 50 * kMiB, 1 * kMiB, 50 * kMiB), shmem(100 * kMiB), shmem(100 * kMiB), shmem(100 * kMiB)}};
  EXPECT_EQ(assemble_pss_pass(mapping).missed, 30 * kMiB);
  EXPECT_EQ(assemble_pss_pass(mapping).bound, 0u) << "its reading held none of them: nothing added";
  mapping[2].rollup = rollup(5 * kMiB, 3 * kMiB, 1 * kMiB, 2 * kMiB);
  EXPECT_EQ(assemble_pss_pass(mapping).missed, 2 * kMiB) << "the member after it shares 4 MiB: at most those";
  std::swap(mapping[1], mapping[2]);
  EXPECT_EQ(assemble_pss_pass(mapping).missed, 0u) << "read last";
}

// A heap that gives memory back is no move: anonymous pages are shared only since a fork.
TEST(PssPass, AHeapGivenBackLeavesNothingOut) {
  const std::vector<PssReading> pass{
      {rollup(101 * kMiB, 51 * kMiB, 1 * kMiB, 50 * kMiB), shmem(100 * kMiB), shmem(100 * kMiB), shmem(100 * kMiB)},
      {rollup(110 * kMiB, 60 * kMiB, 10 * kMiB, 60 * kMiB), shmem(100 * kMiB, 60 * kMiB), shmem(100 * kMiB, 10 * kMiB),
       shmem(100 * kMiB, 10 * kMiB)}};
  const auto p = assemble_pss_pass(pass);
  EXPECT_EQ(p.missed, 0u);
  EXPECT_FALSE(p.moved());
}

// A member that left during the pass is left out (its share went to those read after it), but
// for the last one read; the sum is then the tree after it left, and never below the shared
// memory a member still maps (once the other left, it holds the pages whole).
TEST(PssPass, AMemberThatLeftIsLeftOutButTheLast) {
  const std::vector<PssReading> pass{{rollup(50 * kMiB, 25 * kMiB, 0, 0), shmem(50 * kMiB), ResidentKinds{}},
                                     {rollup(50 * kMiB, 25 * kMiB, 0, 0), shmem(50 * kMiB), shmem(50 * kMiB)},
                                     {rollup(8 * kMiB, 8 * kMiB, 8 * kMiB, 0), anon(8 * kMiB), std::nullopt}};
  const auto p = assemble_pss_pass(pass);
  EXPECT_EQ(p.counted, 2u);
  EXPECT_EQ(p.sum.pss, 50 * kMiB) << "33 read, the 50 MiB one member maps held whole";
  EXPECT_EQ(p.bound, 0u);
  const std::vector<PssReading> gone{{rollup(8 * kMiB, 8 * kMiB, 8 * kMiB, 0), anon(8 * kMiB), ResidentKinds{}},
                                     {rollup(8 * kMiB, 8 * kMiB, 8 * kMiB, 0), anon(8 * kMiB), ResidentKinds{}}};
  EXPECT_EQ(assemble_pss_pass(gone).counted, 1u);
  EXPECT_EQ(assemble_pss_pass({}).counted, 0u);
}

// A kernel without the split (before 5.9) gives no unreclaimable figure.
TEST(PssPass, NoSplitNoUnreclaimable) {
  const std::vector<PssReading> old{{{10 * kMiB, 9 * kMiB, 8 * kMiB, 0, false}, anon(10 * kMiB), anon(10 * kMiB)}};
  EXPECT_FALSE(assemble_pss_pass(old).sum.unreclaimable);
}

// Rollup of a member whose shared pages are shared memory: its share of them is Pss_Shmem.
proc::Rollup shared_rollup(Bytes rss, Bytes pss) { return {rss, pss, 0, pss, true, 0, 0, pss}; }

// A fourth worker maps the 128 MiB its parent and two siblings map, during the pass, read last:
// raw 140 MiB, a bound of 28 (half of the 56 MiB it mapped), and 112 is below what one member
// maps. The members' Pss_Shmem holds all of it (no sharer outside the tree): held whole, 128.
TEST(PssPass, OneMembersSharedMemoryIsHeldWholeWhereNoSharerOutsideShows) {
  const std::vector<PssReading> pass{
      {shared_rollup(128 * kMiB, 52 * kMiB), shmem(128 * kMiB), shmem(128 * kMiB), shmem(128 * kMiB)},
      {shared_rollup(128 * kMiB, 48 * kMiB), shmem(128 * kMiB), shmem(128 * kMiB), shmem(128 * kMiB)},
      {shared_rollup(120 * kMiB, 40 * kMiB), shmem(64 * kMiB), shmem(120 * kMiB), shmem(120 * kMiB)}};
  const auto p = assemble_pss_pass(pass);
  EXPECT_EQ(p.bound, 28 * kMiB);
  EXPECT_EQ(p.shmem_gap, 0u);
  EXPECT_EQ(p.sum.pss, 128 * kMiB);
  EXPECT_EQ(p.sum.unreclaimable, 128 * kMiB);

  // A segment shared with a process outside the tree: its share is not the tree's. No floor, and
  // the gap says a sharer was unread (the sampler looks for children once).
  const std::vector<PssReading> outside{
      {shared_rollup(128 * kMiB, 64 * kMiB), shmem(128 * kMiB), shmem(128 * kMiB), shmem(128 * kMiB)}};
  const auto o = assemble_pss_pass(outside);
  EXPECT_EQ(o.shmem_gap, 64 * kMiB);
  EXPECT_EQ(o.sum.pss, 64 * kMiB);
  // Unless a member read the reading before could not be read now (a worker exiting still
  // unmaps: its shares are the tree's).
  EXPECT_EQ(assemble_pss_pass(outside, {.member_left = true}).sum.pss, 128 * kMiB);
  // The kernel rounds each member's Pss_Shmem down to a KiB: no gap for that.
  std::vector<PssReading> rounded = pass;
  for (PssReading& r : rounded) r.rollup.pss_shmem -= 1024;
  rounded[0].rollup.pss_shmem += 1024;  // two members' KiB
  EXPECT_EQ(assemble_pss_pass(rounded).shmem_gap, 0u);
}

}  // namespace
}  // namespace qprof
