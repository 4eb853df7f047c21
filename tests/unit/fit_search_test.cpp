// SPDX-License-Identifier: Apache-2.0
// qprof fit's decisions on fabricated outcomes: how a probe's end is classified, which limit the
// bisection tries next, and what it reports, on a job whose boundaries are known by construction.
#include "qprof/fit/search.hpp"

#include <gtest/gtest.h>
#include <signal.h>

#include <functional>

namespace qprof::fit {
namespace {

constexpr Bytes MiB = Bytes{1} << 20;

int exited(int code) { return (code & 0xff) << 8; }
int killed_by(int sig) { return sig & 0x7f; }

Baseline baseline(Bytes unreclaimable, Bytes charge, double seconds) {
  Baseline b;
  b.run.seconds = seconds;
  b.unreclaimable_peak = unreclaimable;
  b.charge_peak = charge;
  return b;
}

Probe probe(Bytes limit, Outcome outcome, double seconds) {
  Probe p;
  p.limit = limit;
  p.outcome = outcome;
  p.seconds = seconds;
  return p;
}

TEST(FitResolution, TheLargerOfTheFloorAndTheFraction) {
  const Resolution r;  // 8 MiB, 2 %
  EXPECT_EQ(r.at(100 * MiB), 8 * MiB);
  EXPECT_EQ(r.at(1000 * MiB), 20 * MiB);
  EXPECT_EQ((Resolution{0, 0.05}.at(200 * MiB)), 10 * MiB);
}

TEST(FitOutcome, OnlyTheKernelsCountMakesAnOomKill) {
  EXPECT_EQ(outcome_of(exited(0), false, 0), Outcome::completed);
  EXPECT_EQ(outcome_of(exited(0), false, 1), Outcome::completed) << "a worker killed, the job survived";
  EXPECT_EQ(outcome_of(exited(0), true, 0), Outcome::too_slow);
  EXPECT_EQ(outcome_of(killed_by(SIGKILL), true, 0), Outcome::too_slow) << "qprof's own kill at the cutoff";
  EXPECT_EQ(outcome_of(killed_by(SIGKILL), false, 1), Outcome::oom_killed);
  EXPECT_EQ(outcome_of(exited(137), false, 2), Outcome::oom_killed) << "a shell reporting its child's OOM kill";
  EXPECT_EQ(outcome_of(exited(1), false, 0), Outcome::failed) << "a failure is never taken for an OOM kill";
  EXPECT_EQ(outcome_of(killed_by(SIGKILL), false, 0), Outcome::failed) << "someone else's SIGKILL";
  EXPECT_EQ(outcome_of(killed_by(SIGKILL), false, std::nullopt), Outcome::oom_killed) << "no count: the hint";
  EXPECT_EQ(outcome_of(killed_by(SIGSEGV), false, std::nullopt), Outcome::failed);
  EXPECT_EQ(outcome_of(exited(3), false, std::nullopt), Outcome::failed);
}

TEST(FitLevel, FullSpeedIsWithinTheMarginOfTheBaseline) {
  EXPECT_EQ(level_of(probe(MiB, Outcome::completed, 1.10), 1.0), Level::full_speed);
  EXPECT_EQ(level_of(probe(MiB, Outcome::completed, 1.11), 1.0), Level::within_slowdown);
  EXPECT_EQ(level_of(probe(MiB, Outcome::too_slow, 4.0), 1.0), Level::runs);
  EXPECT_EQ(level_of(probe(MiB, Outcome::oom_killed, 0.1), 1.0), Level::does_not_run);
  EXPECT_EQ(level_of(probe(MiB, Outcome::failed, 0.1), 1.0), Level::does_not_run);
}

// A job known by construction: OOM-killed below `runs`, too slow below `completes`, slower than
// full speed below `full`.
struct Job {
  Bytes runs, completes, full;
  Probe at(Bytes limit) const {
    if (limit < runs) return probe(limit, Outcome::oom_killed, 0.2);
    if (limit < completes) return probe(limit, Outcome::too_slow, 4.0);
    if (limit < full) return probe(limit, Outcome::completed, 2.5);
    return probe(limit, Outcome::completed, 1.0);
  }
};

int search_all(LimitSearch& search, const Job& job) {
  int probes = 0;
  while (const auto limit = search.next()) {
    EXPECT_LT(++probes, 40) << "the search does not end";
    if (probes >= 40) break;
    search.add(job.at(*limit));
  }
  return probes;
}

TEST(FitSearch, FindsEachBoundaryToTheResolution) {
  const Job job{205 * MiB, 230 * MiB, 480 * MiB};
  LimitSearch search(baseline(200 * MiB, 501 * MiB, 1.0), Resolution{});
  const int probes = search_all(search, job);
  const Findings f = search.findings();
  const Resolution r;
  ASSERT_TRUE(f.runs && f.within_slowdown && f.full_speed);
  EXPECT_GE(f.runs->limit, job.runs);
  EXPECT_LE(f.runs->limit - f.runs->short_of, r.at(f.runs->limit));
  EXPECT_GE(f.within_slowdown->limit, job.completes);
  EXPECT_LE(f.within_slowdown->limit - f.within_slowdown->short_of, r.at(f.within_slowdown->limit));
  EXPECT_GE(f.full_speed->limit, job.full);
  EXPECT_LE(f.full_speed->limit - f.full_speed->short_of, r.at(f.full_speed->limit));
  // Each finding rests on a probe that reached it, and the one below fell short.
  EXPECT_EQ(search.probes()[*f.runs->probe].outcome, Outcome::too_slow);
  EXPECT_EQ(search.probes()[*f.within_slowdown->probe].outcome, Outcome::completed);
  EXPECT_LE(probes, 3 * 6) << "three bisections of 300 MiB to 8-10 MiB";
  EXPECT_EQ(search.remaining_estimate(), 0);
}

TEST(FitSearch, TheBaselineChargeIsTheFullSpeedLimitWhenNoProbeReachesIt) {
  const Job job{150 * MiB, 150 * MiB, 1000 * MiB};  // slower than full speed at every limit tried
  LimitSearch search(baseline(100 * MiB, 300 * MiB, 1.0), Resolution{});
  search_all(search, job);
  const Findings f = search.findings();
  EXPECT_EQ(f.full_speed->limit, 300 * MiB);
  EXPECT_FALSE(f.full_speed->probe) << "no probe: the unlimited run's charge";
  EXPECT_GE(f.full_speed->short_of, 300 * MiB - Resolution{}.at(300 * MiB));
}

TEST(FitSearch, AShortfallAboveASuccessMovesTheBoundaryUp) {
  // Timing noise: 212 MiB completed, 232 MiB was too slow. The boundary is above 232 MiB.
  LimitSearch search(baseline(100 * MiB, 250 * MiB, 0.3), Resolution{});
  search.add(probe(212 * MiB, Outcome::completed, 0.8));
  search.add(probe(232 * MiB, Outcome::too_slow, 1.3));
  search.add(probe(236 * MiB, Outcome::completed, 0.8));
  const Findings f = search.findings();
  EXPECT_EQ(f.within_slowdown->limit, 236 * MiB);
  EXPECT_EQ(f.within_slowdown->short_of, 232 * MiB);
  EXPECT_EQ(f.runs->limit, 212 * MiB) << "running is not contradicted";
}

TEST(FitSearch, FullSpeedIsJudgedAgainstTheFastestRun) {
  // The baseline was slowed by a busy machine: 2 s, where a limited run took 0.5 s.
  LimitSearch search(baseline(100 * MiB, 300 * MiB, 2.0), Resolution{});
  search.add(probe(200 * MiB, Outcome::completed, 1.9));
  EXPECT_EQ(search.findings().full_speed->limit, 200 * MiB) << "within 10 % of the only figure there is";
  search.add(probe(250 * MiB, Outcome::completed, 0.5));
  EXPECT_EQ(search.reference_seconds(), 0.5);
  EXPECT_EQ(search.findings().full_speed->limit, 250 * MiB);
  EXPECT_EQ(search.findings().full_speed->short_of, 200 * MiB);
  EXPECT_EQ(search.findings().within_slowdown->limit, 200 * MiB);
}

TEST(FitSearch, NothingToSearchWhereTheChargeIsAllUnreclaimable) {
  LimitSearch search(baseline(300 * MiB, 300 * MiB, 1.0), Resolution{});
  EXPECT_FALSE(search.next());
  EXPECT_EQ(search.findings().runs->limit, 300 * MiB);
  EXPECT_EQ(search.remaining_estimate(), 0);
}

TEST(FitSearch, TheFirstProbeIsTheMiddleAndTheEstimateShrinks) {
  LimitSearch search(baseline(100 * MiB, 356 * MiB, 1.0), Resolution{});
  EXPECT_EQ(search.next(), 228 * MiB);
  const int before = search.remaining_estimate();
  EXPECT_GE(before, 5);
  search.add(probe(228 * MiB, Outcome::completed, 1.0));  // full speed: every boundary is below
  EXPECT_LT(search.next(), 228 * MiB);
  EXPECT_LT(search.remaining_estimate(), before);
}

// The noisy job of the issue: within 4x at 157.8, 170.3 and 220.6 MiB, one run too slow at
// 308.4 MiB. The shortfall is run again before the bisection goes on; its repeat completing, the
// limit is noisy, not the boundary.
TEST(FitSearch, AShortfallAboveASuccessIsRunAgainAndNoiseDoesNotMoveTheBoundary) {
  LimitSearch search(baseline(100 * MiB, 330 * MiB, 1.0), Resolution{});
  search.add(probe(150 * MiB, Outcome::too_slow, 4.0));
  search.add(probe(157 * MiB, Outcome::completed, 3.0));
  search.add(probe(170 * MiB, Outcome::completed, 2.0));
  search.add(probe(220 * MiB, Outcome::completed, 1.5));
  search.add(probe(308 * MiB, Outcome::too_slow, 4.12));
  EXPECT_EQ(search.next(), 308 * MiB) << "the disagreeing run first";
  EXPECT_EQ(search.findings().within_slowdown->limit, 330 * MiB) << "before the repeat: above it";
  search.add(probe(308 * MiB, Outcome::completed, 1.2));
  const Findings f = search.findings();
  EXPECT_EQ(f.within_slowdown->limit, 157 * MiB);
  EXPECT_EQ(f.within_slowdown->short_of, 150 * MiB);
  ASSERT_EQ(f.within_slowdown->noisy.size(), 1u);
  EXPECT_EQ(f.within_slowdown->noisy[0].limit, 308 * MiB);
  EXPECT_EQ(f.within_slowdown->noisy[0].runs, 2);
  EXPECT_EQ(f.within_slowdown->noisy[0].reached, 1);
  EXPECT_EQ(search.probes()[f.within_slowdown->noisy[0].probe].seconds, 4.12) << "the run that fell short";
  EXPECT_TRUE(f.within_slowdown->not_monotone.empty());
  EXPECT_NE(search.next(), 308 * MiB) << "repeated once only";
}

// Where the shortfall holds on its repeat, the nearest success below it is run again once; the
// answer is above the shortfall, and the successes below are said.
TEST(FitSearch, AShortfallThatHoldsMakesTheSuccessBelowRunAgain) {
  LimitSearch search(baseline(100 * MiB, 330 * MiB, 1.0), Resolution{});
  search.add(probe(200 * MiB, Outcome::completed, 2.0));
  search.add(probe(260 * MiB, Outcome::oom_killed, 0.5));
  EXPECT_EQ(search.next(), 260 * MiB);
  search.add(probe(260 * MiB, Outcome::oom_killed, 0.5));
  EXPECT_EQ(search.next(), 200 * MiB) << "then the success nearest below";
  search.add(probe(200 * MiB, Outcome::completed, 2.1));
  const auto next = search.next();
  ASSERT_TRUE(next);
  EXPECT_GT(*next, 260 * MiB) << "the bisection goes on above the shortfall";
  const Findings f = search.findings();
  EXPECT_EQ(f.runs->short_of, 260 * MiB);
  ASSERT_EQ(f.runs->not_monotone.size(), 1u);
  EXPECT_EQ(f.runs->not_monotone[0].limit, 200 * MiB);
  EXPECT_EQ(f.runs->not_monotone[0].runs, 2);
  EXPECT_EQ(f.runs->not_monotone[0].reached, 2);
}

TEST(FitSearch, AMonotoneJobIsNeverRunTwiceAtALimit) {
  const Job job{205 * MiB, 230 * MiB, 480 * MiB};
  LimitSearch search(baseline(200 * MiB, 501 * MiB, 1.0), Resolution{});
  search_all(search, job);
  for (std::size_t i = 0; i < search.probes().size(); ++i) {
    for (std::size_t j = i + 1; j < search.probes().size(); ++j)
      EXPECT_NE(search.probes()[i].limit, search.probes()[j].limit);
  }
  const Findings f = search.findings();
  EXPECT_TRUE(f.runs->noisy.empty() && f.within_slowdown->noisy.empty() && f.full_speed->noisy.empty());
}

}  // namespace
}  // namespace qprof::fit
