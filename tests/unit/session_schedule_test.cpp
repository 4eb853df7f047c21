// SPDX-License-Identifier: Apache-2.0
// The run's deadlines alone: regular and stats schedules, missed deadlines, restarts; the
// samples' mean interval; the CPU rate over stats intervals.
#include <gtest/gtest.h>

#include "session/cpu_rate.hpp"
#include "session/schedule.hpp"

namespace qprof::record::session {
namespace {

constexpr std::int64_t kMs = 1000000;

TEST(SessionSchedule, BothSchedulesAreDueAtTheStart) {
  const Schedule s(0.1, 1.0, 5 * kMs);
  EXPECT_FALSE(s.sample_due(5 * kMs - 1));
  EXPECT_TRUE(s.sample_due(5 * kMs));
  EXPECT_TRUE(s.stats_due(5 * kMs));
  EXPECT_EQ(s.next(), 5 * kMs);
}

TEST(SessionSchedule, DeadlinesStayOnTheGridAndLateOnesAreSkippedAndCounted) {
  Schedule s(0.1, 1.0, 0);
  s.sample_taken(3 * kMs);  // on time
  EXPECT_EQ(s.missed(), 0u);
  EXPECT_FALSE(s.sample_due(99 * kMs));
  EXPECT_TRUE(s.sample_due(100 * kMs));
  s.sample_taken(350 * kMs);  // 200 and 300 ms went by
  EXPECT_EQ(s.missed(), 2u);
  EXPECT_FALSE(s.sample_due(399 * kMs));
  EXPECT_TRUE(s.sample_due(400 * kMs));
}

TEST(SessionSchedule, StatsPassesFollowTheirOwnPeriodAndTheirMissesAreNotCounted) {
  Schedule s(0.1, 1.0, 0);
  s.sample_taken(1 * kMs);
  s.stats_taken(1 * kMs);
  EXPECT_EQ(s.next(), 100 * kMs);
  EXPECT_FALSE(s.stats_due(999 * kMs));
  EXPECT_TRUE(s.stats_due(1000 * kMs));
  s.stats_taken(3500 * kMs);
  EXPECT_EQ(s.missed(), 0u);
  EXPECT_TRUE(s.stats_due(4000 * kMs));
}

TEST(SessionSchedule, StatsAreNeverMoreOftenThanSamples) {
  Schedule s(0.5, 0.1, 0);
  s.stats_taken(0);
  EXPECT_FALSE(s.stats_due(499 * kMs));
  EXPECT_TRUE(s.stats_due(500 * kMs));
}

TEST(SessionSchedule, ARestartMakesBothDueFromThenWithNothingMissed) {
  Schedule s(0.1, 1.0, 0);
  s.sample_taken(0);
  s.stats_taken(0);
  s.restart(60000 * kMs);
  EXPECT_TRUE(s.sample_due(60000 * kMs));
  EXPECT_TRUE(s.stats_due(60000 * kMs));
  s.sample_taken(60001 * kMs);
  EXPECT_EQ(s.missed(), 0u);
  EXPECT_TRUE(s.sample_due(60100 * kMs));
}

TEST(SessionSampleSpan, MeanIntervalOverTheSpanLessTheTimeStopped) {
  SampleSpan span;
  EXPECT_EQ(span.mean_interval(0), 0);
  span.taken(10.0);
  EXPECT_EQ(span.mean_interval(0), 0);  // one sample: no interval
  span.taken(10.1);
  span.taken(12.2);
  EXPECT_EQ(span.count(), 3u);
  EXPECT_NEAR(span.mean_interval(0), 1.1, 1e-9);
  EXPECT_NEAR(span.mean_interval(2.0), 0.1, 1e-9);
  EXPECT_EQ(span.mean_interval(5.0), 0);  // never negative
}

TEST(SessionCpuRate, RateOverEachStatsIntervalAndItsPeak) {
  CpuRate rate(1.0);
  EXPECT_FALSE(rate.add(100.0, 0.0));  // the first reading only starts the interval
  EXPECT_FALSE(rate.latest());
  EXPECT_DOUBLE_EQ(rate.add(101.0, 2.0).value(), 200.0);
  EXPECT_DOUBLE_EQ(rate.add(103.0, 3.0).value(), 50.0);
  EXPECT_DOUBLE_EQ(rate.latest().value(), 50.0);
  EXPECT_DOUBLE_EQ(rate.peak().value(), 200.0);
}

TEST(SessionCpuRate, AnIntervalShorterThanHalfTheAskedOneIsNotMeasured) {
  CpuRate rate(1.0);
  rate.add(100.0, 0.0);
  EXPECT_FALSE(rate.add(100.4, 1.0));  // a marker's pass right after a scheduled one
  EXPECT_FALSE(rate.peak());
  // The interval still runs from the last measured reading.
  EXPECT_DOUBLE_EQ(rate.add(101.0, 1.5).value(), 150.0);
}

// A job of 21 ms: one reading, no interval. Its mean is its one rate: no peak is made of it
// (the summary said "98 % on average, 0 % at most").
TEST(SessionCpuRate, ARunShorterThanHalfAnIntervalHasNoPeak) {
  CpuRate rate(0.1);
  rate.add(100.0, 0.0);     // the start: CPU time 0
  rate.add(100.021, 0.02);  // the final pass
  rate.finish();
  EXPECT_FALSE(rate.peak());
}

// The CPU time of the last readings, too close to the last measured one to be an interval of
// their own, joins it: the mean of the run can never be above the peak ("98 % of one core on
// average, 80 % at most").
TEST(SessionCpuRate, TheMeanOfTheRunIsNeverAboveThePeak) {
  for (const double tail : {0.0, 0.01, 0.04, 0.049}) {
    CpuRate rate(0.1);
    rate.add(100.0, 0.0);
    rate.add(100.1, 0.08);                // 80 %
    rate.add(100.2, 0.16);                // 80 %
    rate.add(100.2 + tail, 0.16 + tail);  // 100 % in the tail: merged into the last interval
    rate.finish();
    const double mean = 100.0 * (0.16 + tail) / (0.2 + tail);
    ASSERT_TRUE(rate.peak());
    EXPECT_GE(*rate.peak() + 1e-9, mean) << "tail " << tail;
  }
}

}  // namespace
}  // namespace qprof::record::session
