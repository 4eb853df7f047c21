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
// change of sharing during it added (half a page per page a member mapped or dropped, of the
// pages it shares), and that bound is taken off.
namespace qprof {
namespace {
using record::assemble_pss_pass;
using record::PssReading;

constexpr Bytes kMiB = Bytes{1} << 20;

proc::Rollup rollup(Bytes rss, Bytes pss, Bytes uss, Bytes unreclaimable) {
  return {rss, pss, uss, unreclaimable, true};
}

TEST(PssPass, AStillTreeIsItsSum) {
  const std::vector<PssReading> still{{rollup(100 * kMiB, 50 * kMiB, 10 * kMiB, 45 * kMiB), 100 * kMiB, 100 * kMiB},
                                      {rollup(80 * kMiB, 40 * kMiB, 0, 40 * kMiB), 80 * kMiB, 80 * kMiB}};
  const auto p = assemble_pss_pass(still);
  EXPECT_EQ(p.sum.pss, 90 * kMiB);
  EXPECT_EQ(p.sum.uss, 10 * kMiB);
  EXPECT_EQ(p.sum.unreclaimable, 85 * kMiB);
  EXPECT_EQ(p.slack, 0u);
  EXPECT_EQ(p.counted, 2u);
  EXPECT_FALSE(p.moved());
}

// The case of the e2e test that failed under load: the parent read first holding 100 MiB alone,
// then 3 readers read after they mapped all of it. Raw, 100 + 3 × 25 = 175 MiB; the truth at
// every moment, 100 MiB.
TEST(PssPass, ReadersThatMappedASharedBufferDuringThePassAreNotCountedTwice) {
  std::vector<PssReading> pass{{rollup(100 * kMiB, 100 * kMiB, 100 * kMiB, 100 * kMiB), 100 * kMiB, 100 * kMiB}};
  for (int i = 0; i < 3; ++i) pass.push_back({rollup(100 * kMiB, 25 * kMiB, 0, 25 * kMiB), 0, 100 * kMiB});
  const auto p = assemble_pss_pass(pass);
  EXPECT_LE(p.sum.pss, 100 * kMiB);
  EXPECT_LE(*p.sum.unreclaimable, p.sum.pss);
  EXPECT_EQ(p.sum.pss + p.slack, 175 * kMiB) << "the bound taken off is the slack said";
  EXPECT_TRUE(p.moved()) << "read again";
  EXPECT_GE(p.sum.pss, p.sum.uss) << "never below the pages held alone";
}

// Growth in pages of a member's own (USS) moves no other member's share: nothing is taken off.
TEST(PssPass, AMemberThatGrowsPrivatelyIsNotCut) {
  const std::vector<PssReading> growing{{rollup(60 * kMiB, 60 * kMiB, 60 * kMiB, 60 * kMiB), 50 * kMiB, 70 * kMiB},
                                        {rollup(10 * kMiB, 8 * kMiB, 6 * kMiB, 7 * kMiB), 10 * kMiB, 10 * kMiB}};
  const auto p = assemble_pss_pass(growing);
  EXPECT_EQ(p.sum.pss, 68 * kMiB);
  EXPECT_EQ(p.slack, 0u);
  // A member with shared pages that grew: at most the shared part, halved.
  const std::vector<PssReading> mixed{{rollup(60 * kMiB, 40 * kMiB, 30 * kMiB, 0), 40 * kMiB, 60 * kMiB}};
  EXPECT_EQ(assemble_pss_pass(mixed).slack, 10 * kMiB);
}

// A member that left during the pass is left out (its share went to those read after it), but
// for the last one read; the sum is then the tree after it left.
TEST(PssPass, AMemberThatLeftIsLeftOutButTheLast) {
  const std::vector<PssReading> pass{{rollup(50 * kMiB, 25 * kMiB, 0, 0), 50 * kMiB, 0},
                                     {rollup(50 * kMiB, 25 * kMiB, 0, 0), 50 * kMiB, 50 * kMiB},
                                     {rollup(8 * kMiB, 8 * kMiB, 8 * kMiB, 0), 8 * kMiB, std::nullopt}};
  const auto p = assemble_pss_pass(pass);
  EXPECT_EQ(p.counted, 2u);
  EXPECT_EQ(p.sum.pss, 33 * kMiB);
  EXPECT_EQ(p.slack, 0u);
  const std::vector<PssReading> gone{{rollup(8 * kMiB, 8 * kMiB, 8 * kMiB, 0), 8 * kMiB, 0},
                                     {rollup(8 * kMiB, 8 * kMiB, 8 * kMiB, 0), 8 * kMiB, 0}};
  EXPECT_EQ(assemble_pss_pass(gone).counted, 1u);
  EXPECT_EQ(assemble_pss_pass({}).counted, 0u);
}

// A kernel without the split (before 5.9) gives no unreclaimable figure.
TEST(PssPass, NoSplitNoUnreclaimable) {
  const std::vector<PssReading> old{{{10 * kMiB, 9 * kMiB, 8 * kMiB, 0, false}, 10 * kMiB, 10 * kMiB}};
  EXPECT_FALSE(assemble_pss_pass(old).sum.unreclaimable);
}

}  // namespace
}  // namespace qprof
