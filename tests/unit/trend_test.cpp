// SPDX-License-Identifier: Apache-2.0
// The least-squares fits and the rule that calls a run's growth, on series built to a known truth.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "qprof/analysis/trend.hpp"

namespace qprof {
using analysis::fit_line;
using analysis::fit_power;
using analysis::run_trends;
using analysis::trend_of;
using trace::MemSample;
using trace::Trace;

namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr Seconds kT0 = 1.7e9;  // Unix seconds, as a trace has them

// Samples every `dt` seconds for `seconds`, the value from `bytes_at(t)` plus a deterministic
// jitter of ±`jitter` bytes (an allocator's and the page cache's wobble).
template <typename F>
std::vector<MemSample> series(Seconds seconds, Seconds dt, F bytes_at, double jitter = 2 * kMiB) {
  std::vector<MemSample> s;
  std::uint32_t state = 12345;
  for (Seconds t = 0; t <= seconds + 1e-9; t += dt) {
    state = state * 1664525u + 1013904223u;
    const double noise = (static_cast<double>(state >> 8) / static_cast<double>(1u << 24) * 2 - 1) * jitter;
    s.push_back({kT0 + t, static_cast<Bytes>(std::max(0.0, bytes_at(t) + noise))});
  }
  return s;
}

TEST(LineFit, RecoversInterceptAndSlopeOfAnExactLine) {
  // a + b × N MiB for N = 1, 2, 4, 8 workers: the sweep's model.
  const std::vector<double> n{1, 2, 4, 8};
  std::vector<double> mib;
  for (double w : n) mib.push_back(50 + 30 * w);
  const auto f = fit_line(n, mib);
  ASSERT_TRUE(f);
  EXPECT_NEAR(f->slope, 30, 1e-9);
  EXPECT_NEAR(f->intercept, 50, 1e-9);
  EXPECT_NEAR(f->r2, 1.0, 1e-12);
  // 50 + 30 N ≤ 500 ⇔ N ≤ 15.
  EXPECT_NEAR(*f->solve(500), 15.0, 1e-9);
  EXPECT_NEAR(f->at(16), 530, 1e-9);
}

TEST(LineFit, NeedsTwoDistinctPointsAndFiniteValues) {
  EXPECT_FALSE(fit_line({1}, {2}));
  EXPECT_FALSE(fit_line({3, 3, 3}, {1, 2, 3}));
  EXPECT_FALSE(fit_line({1, 2}, {1, NAN}));
  EXPECT_FALSE(fit_line({1, 2}, {1}));
  const auto falling = fit_line({1, 2}, {4, 2});
  ASSERT_TRUE(falling);
  EXPECT_FALSE(falling->solve(10));  // never rises: no largest value
}

TEST(PowerFit, RecoversTheExponentOfAQuadraticAndBeatsTheLine) {
  const std::vector<double> n{1, 2, 4, 8};
  std::vector<double> mib;
  for (double w : n) mib.push_back(10 * w * w);
  const auto p = fit_power(n, mib);
  const auto l = fit_line(n, mib);
  ASSERT_TRUE(p && l);
  EXPECT_NEAR(p->exponent, 2.0, 1e-9);
  EXPECT_NEAR(p->coefficient, 10.0, 1e-9);
  EXPECT_GT(p->r2, l->r2);
  EXPECT_NEAR(*p->solve(1000), 10.0, 1e-9);
  EXPECT_FALSE(fit_power({0, 1}, {1, 2}));  // log of 0
}

TEST(Trend, AJobGrowing20MiBPerSecondIsSaidWithItsSlope) {
  const auto s = series(5, 0.1, [](Seconds t) { return 80 * kMiB + 20 * kMiB * t; });
  const auto tr = trend_of(s, kT0);
  ASSERT_TRUE(tr);
  EXPECT_NEAR(tr->bytes_per_second() / kMiB, 20, 20 * 0.05);
  EXPECT_GT(tr->fit.r2, 0.99);
  EXPECT_TRUE(tr->significant);
  // The first quarter (start-up) and the last 5 % of the time are left out.
  EXPECT_NEAR(tr->from, 1.25, 0.1 + 1e-9);
  EXPECT_NEAR(tr->to, 4.75, 0.1 + 1e-9);
}

TEST(Trend, FlatStepSpikeAndWarmUpAreNoLeak) {
  const auto flat = series(10, 0.1, [](Seconds) { return 200 * kMiB; });
  const auto step = series(10, 0.1, [](Seconds t) { return t < 5 ? 50 * kMiB : 250 * kMiB; });
  const auto late_step = series(10, 0.1, [](Seconds t) { return t < 7 ? 50 * kMiB : 250 * kMiB; });
  const auto spike = series(10, 0.1, [](Seconds t) { return std::fabs(t - 6) < 0.15 ? 900 * kMiB : 100 * kMiB; });
  const auto warm_up = series(10, 0.1, [](Seconds t) { return std::min(t, 4.0) * 100 * kMiB + 50 * kMiB; });
  for (const auto* s : {&flat, &step, &late_step, &spike, &warm_up}) {
    const auto tr = trend_of(*s, kT0);
    ASSERT_TRUE(tr);
    EXPECT_FALSE(tr->significant) << "slope " << tr->bytes_per_second() / kMiB << " MiB/s, R² " << tr->fit.r2;
  }
}

// A start-up that grows for most of a short job (imports, a CUDA context), slowing down as it
// goes: no steady phase, so no trend is said, however well a line fits it.
TEST(Trend, AStartUpThatSlowsDownIsNoLeak) {
  const auto startup = series(12, 0.1, [](Seconds t) { return 200 * kMiB + 1400 * kMiB * (1 - std::exp(-t / 4)); });
  const auto tr = trend_of(startup, kT0);
  ASSERT_TRUE(tr);
  EXPECT_GT(tr->fit.r2, 0.9) << "a line fits it well";
  EXPECT_FALSE(tr->significant) << "early " << tr->early_slope / kMiB << " late " << tr->late_slope / kMiB;
  // The same growth, steady: a leak.
  const auto steady = series(12, 0.1, [](Seconds t) { return 200 * kMiB + 100 * kMiB * t; });
  EXPECT_TRUE(trend_of(steady, kT0)->significant);
}

TEST(Trend, SmallOrShortGrowthIsNoLeak) {
  // 1 MiB over 10 s on 2 GiB: under both size thresholds.
  const auto small = series(
      10, 0.1, [](Seconds t) { return 2048 * kMiB + 0.1 * kMiB * t; }, 0);
  EXPECT_FALSE(trend_of(small, kT0)->significant);
  // Steep, but over a second: too short to tell from a start-up.
  const auto short_run = series(
      1, 0.05, [](Seconds t) { return 100 * kMiB * t; }, 0);
  EXPECT_FALSE(trend_of(short_run, kT0)->significant);
}

TEST(Trend, FewerThanFiveReadingsGiveNoSlope) {
  // A stage with two footprint readings fits a line exactly (R² 1.00): no slope is a finding.
  const auto two = series(
      0.1, 0.1, [](Seconds t) { return 100 * kMiB + 500 * kMiB * t; }, 0);
  ASSERT_EQ(two.size(), 2u);
  analysis::TrendRule whole;  // no trim, no start-up: the count is of the readings given
  whole.trim = 0;
  whole.startup = 0;
  EXPECT_FALSE(trend_of(two, kT0, {}, {}, whole));
  const auto four = series(
      0.3, 0.1, [](Seconds t) { return 100 * kMiB + 500 * kMiB * t; }, 0);
  ASSERT_EQ(four.size(), 4u);
  EXPECT_FALSE(trend_of(four, kT0, {}, {}, whole));
  const auto five = series(
      0.4, 0.1, [](Seconds t) { return 100 * kMiB + 500 * kMiB * t; }, 0);
  ASSERT_EQ(five.size(), 5u);
  ASSERT_TRUE(trend_of(five, kT0, {}, {}, whole));
  EXPECT_NEAR(trend_of(five, kT0, {}, {}, whole)->bytes_per_second() / kMiB, 500, 1.0);
}

TEST(Trend, AWindowFitsOnlyItsSamples) {
  // Flat for 5 s, then 20 MiB/s for 5 s: each half's own slope.
  const auto s = series(10, 0.1, [](Seconds t) { return 100 * kMiB + (t < 5 ? 0 : 20 * kMiB * (t - 5)); });
  const auto first = trend_of(s, kT0, 0.0, 5.0);
  const auto second = trend_of(s, kT0, 5.0, 10.0);
  ASSERT_TRUE(first && second);
  EXPECT_NEAR(first->bytes_per_second() / kMiB, 0, 1.0);
  EXPECT_FALSE(first->significant);
  EXPECT_NEAR(second->bytes_per_second() / kMiB, 20, 1.0);
  EXPECT_TRUE(second->significant);
}

TEST(Trend, RunTrendsFitsRssAndPssWhereRecorded) {
  Trace t;
  t.mem = series(6, 0.1, [](Seconds s) { return 100 * kMiB + 20 * kMiB * s; });
  t.meta.start = kT0;
  auto trends = run_trends(t);
  ASSERT_EQ(trends.size(), 1u);
  EXPECT_EQ(trends[0].key, "rss");
  for (const MemSample& m : t.mem) t.pss.push_back({m.t, m.bytes / 2, m.bytes / 4, std::nullopt});
  trends = run_trends(t);
  ASSERT_EQ(trends.size(), 2u);
  EXPECT_EQ(trends[1].key, "pss");
  EXPECT_NEAR(trends[1].trend.bytes_per_second() / kMiB, 10, 0.5);
}

}  // namespace
}  // namespace qprof
