// SPDX-License-Identifier: Apache-2.0
// The run's deadlines alone: regular and stats schedules, missed deadlines, restarts; the
// samples' mean interval; the CPU rate over stats intervals.
#include <gtest/gtest.h>

#include "session/cpu_rate.hpp"
#include "session/schedule.hpp"

namespace qprof::session_detail {
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
  EXPECT_DOUBLE_EQ(rate.peak(), 200.0);
}

TEST(SessionCpuRate, AnIntervalShorterThanHalfTheAskedOneIsNotMeasured) {
  CpuRate rate(1.0);
  rate.add(100.0, 0.0);
  EXPECT_FALSE(rate.add(100.4, 1.0));  // a marker's pass right after a scheduled one
  EXPECT_EQ(rate.peak(), 0);
  // The interval still runs from the last measured reading.
  EXPECT_DOUBLE_EQ(rate.add(101.0, 1.5).value(), 150.0);
}

}  // namespace
}  // namespace qprof::session_detail
