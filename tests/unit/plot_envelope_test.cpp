// SPDX-License-Identifier: Apache-2.0
#include "qprof/plot/envelope.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace qprof::plot {
namespace {

bool contains(const std::vector<Point>& pts, Point p) { return std::find(pts.begin(), pts.end(), p) != pts.end(); }

TEST(PlotEnvelope, KeepsTheTrueMaximumAndMinimumOfRandomSeries) {
  std::mt19937_64 rng(12345);
  for (int round = 0; round < 40; ++round) {
    const std::size_t columns = 50 + rng() % 2000;
    const std::size_t n = 1 + rng() % 200000;
    Envelope env(columns);
    std::uniform_real_distribution<double> value(0, 1e9), gap(1e-4, 0.02);
    double t = 1.7e9 + static_cast<double>(rng() % 1000);
    Point hi{0, -1}, lo{0, 2e9};
    for (std::size_t i = 0; i < n; ++i) {
      // Mostly noise, with rare spikes a plain decimation would miss.
      double v = value(rng);
      if (rng() % 5000 == 0) v = 5e9 + value(rng);
      if (v > hi.v) hi = {t, v};
      if (v < lo.v) lo = {t, v};
      env.add(t, v);
      t += gap(rng);
    }
    const std::vector<Point> pts = env.points();
    ASSERT_TRUE(contains(pts, hi)) << "round " << round;
    ASSERT_TRUE(contains(pts, lo)) << "round " << round;
    EXPECT_EQ(env.max(), hi);
    EXPECT_EQ(env.min(), lo);
    // Reduced to at most 4 points per bucket and at most 2 × columns buckets.
    EXPECT_LE(env.buckets(), 2 * columns);
    EXPECT_LE(pts.size(), std::min<std::size_t>(4 * env.buckets(), n));
    // In time order, ending with the last sample and starting with the first.
    EXPECT_TRUE(std::is_sorted(pts.begin(), pts.end(), [](const Point& a, const Point& b) { return a.t < b.t; }));
    EXPECT_EQ(pts.front(), env.first());
    EXPECT_EQ(pts.back(), env.last());
    // Every kept point is a real sample: between the extremes.
    for (const Point& p : pts) {
      EXPECT_GE(p.v, lo.v);
      EXPECT_LE(p.v, hi.v);
    }
  }
}

TEST(PlotEnvelope, ALongSeriesEndsBetweenOneAndTwoBucketsPerColumn) {
  Envelope env(1000);
  for (int i = 0; i < 1'000'000; ++i) env.add(i * 0.001, std::sin(i * 0.01));
  EXPECT_GE(env.buckets(), 1000u);
  EXPECT_LE(env.buckets(), 2000u);
  EXPECT_LE(env.points().size(), 8000u);
  EXPECT_EQ(env.count(), 1'000'000u);
}

TEST(PlotEnvelope, ShortSeriesKeepsEverySample) {
  Envelope env(100);
  std::vector<Point> in;
  for (int i = 0; i < 50; ++i) {
    in.push_back({10.0 + i * 0.1, static_cast<double>((i * 37) % 11)});
    env.add(in.back().t, in.back().v);
  }
  EXPECT_EQ(env.points(), in);
  EXPECT_EQ(env.last_points(), in);
}

TEST(PlotEnvelope, SingleSampleAndConstantSeries) {
  Envelope one(10);
  one.add(5, 7);
  EXPECT_EQ(one.points(), (std::vector<Point>{{5, 7}}));
  Envelope flat(10);
  for (int i = 0; i < 10000; ++i) flat.add(i, 3);
  const auto pts = flat.points();
  EXPECT_LE(pts.size(), 2 * flat.buckets());  // first and last of each bucket only
  EXPECT_EQ(pts.front(), (Point{0, 3}));
  EXPECT_EQ(pts.back(), (Point{9999, 3}));
}

TEST(PlotEnvelope, LastPointsFollowACounter) {
  Envelope env(10);
  for (int i = 0; i <= 1000; ++i) env.add(i, i * 2.0);
  const auto pts = env.last_points();
  ASSERT_FALSE(pts.empty());
  EXPECT_EQ(pts.back(), (Point{1000, 2000}));
  EXPECT_LE(pts.size(), 20u);
  for (const Point& p : pts) EXPECT_EQ(p.v, p.t * 2.0);  // real samples
}

TEST(PlotEnvelope, SeriesOnASharedGridAreCutAtTheSameTimes) {
  auto grid = std::make_shared<EnvelopeGrid>(100);
  Envelope a(grid), b(grid);
  for (int i = 0; i < 100000; ++i) {
    a.add(i * 0.01, i);
    // b lives only in the middle tenth: it holds only its own buckets.
    if (i >= 45000 && i < 55000) b.add(i * 0.01, -i);
  }
  EXPECT_LE(a.buckets(), 200u);
  EXPECT_LE(b.buckets(), a.buckets() / 5);
  EXPECT_EQ(b.max(), (Point{450.0, -45000}));
  EXPECT_TRUE(contains(b.points(), Point{549.99, -54999}));
  EXPECT_GT(grid->width(), 0.0);
}

TEST(PlotEnvelope, TimeGoingBackLandsInTheFirstBucket) {
  Envelope env(10);
  env.add(100, 1);
  env.add(101, 2);
  env.add(50, 99);  // an appended second run whose clock was earlier
  EXPECT_EQ(env.max(), (Point{50, 99}));
  EXPECT_TRUE(contains(env.points(), Point{50, 99}));
}

}  // namespace
}  // namespace qprof::plot
