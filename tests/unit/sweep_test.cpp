// SPDX-License-Identifier: Apache-2.0
// The sweep's grid, placeholders, names and values read back, and its model on runs built to a
// known truth.
#include <gtest/gtest.h>

#include "qprof/analysis/sweep_grid.hpp"
#include "qprof/analysis/sweep_model.hpp"
#include "qprof/report/sweep.hpp"

namespace qprof {
using analysis::FigureModel;
using analysis::fill_placeholders;
using analysis::parse_sweep_parameter;
using analysis::point_name;
using analysis::sweep_grid;
using analysis::sweep_model;
using analysis::SweepModel;
using analysis::SweepPoint;
using analysis::SweepPointRuns;
using analysis::value_in_label;
using trace::Trace;

namespace {

TEST(SweepGrid, ParametersMakeEveryCombinationFirstSlowest) {
  const auto a = parse_sweep_parameter("a=1,2");
  const auto b = parse_sweep_parameter("b=x,y,z");
  ASSERT_TRUE(a.ok() && b.ok());
  const auto grid = sweep_grid({*a, *b});
  ASSERT_EQ(grid.size(), 6u);
  EXPECT_EQ(point_name(grid[0]), "a=1,b=x");
  EXPECT_EQ(point_name(grid[5]), "a=2,b=z");
  const auto no_eq = parse_sweep_parameter("novalue");
  ASSERT_FALSE(no_eq.ok());
  EXPECT_EQ(no_eq.failure().message, "'novalue' is not NAME=VALUE,VALUE,...");
  EXPECT_FALSE(parse_sweep_parameter("9n=1").ok());
  const auto empty = parse_sweep_parameter("n=1,");
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.failure().message, "-p n=1,: an empty value");
  EXPECT_TRUE(sweep_grid({}).empty());
}

TEST(SweepGrid, PlaceholdersFillOnlyTheirParameters) {
  const SweepPoint p{{"n", "a b"}, {"m", "it's"}};
  EXPECT_EQ(fill_placeholders("--n={n}/{m}", p), "--n=a b/it's");
  EXPECT_EQ(fill_placeholders("{other} {n", p), "{other} {n");
  EXPECT_EQ(point_name(p), "n=a_b,m=it_s");
}

TEST(SweepGrid, ValuesAreReadBackFromLabelsAndFileNames) {
  EXPECT_EQ(value_in_label("runs/workers=8.dat", "workers"), "8");
  EXPECT_EQ(value_in_label("workers=8,samples=64,repeat=2.dat", "samples"), "64");
  EXPECT_EQ(value_in_label("lr=0.5", "lr"), "0.5");
  EXPECT_FALSE(value_in_label("num_workers=8", "workers"));
  EXPECT_FALSE(value_in_label("workers.dat", "workers"));
  // A point run again into its directory takes the next free name: the same value.
  EXPECT_EQ(value_in_label("sw1/n=20~2.dat", "n"), "20");
  EXPECT_EQ(value_in_label("workers=8,samples=64~13", "samples"), "64");
  EXPECT_EQ(value_in_label("n=a~b", "n"), "a~b") << "not a repeat's mark: the value, said as no number";
  EXPECT_EQ(value_in_label("n=20~", "n"), "20~");
}

// A trace whose Σ RSS peaks at `mib` MiB.
Trace trace_of(double mib) {
  Trace t;
  t.mem = {{0, 0}, {1, static_cast<Bytes>(mib * (1 << 20))}};
  return t;
}

TEST(SweepModel, SolvesTheLargestValueThatFitsAndPredicts) {
  std::vector<Trace> traces;
  for (double n : {1, 2, 4, 8}) traces.push_back(trace_of(50 + 30 * n));
  std::vector<SweepPointRuns> points;
  for (std::size_t i = 0; i < traces.size(); ++i) points.push_back({static_cast<double>(1 << i), {&traces[i]}, {}});
  const SweepModel m = sweep_model("workers", points);
  const FigureModel* rss = nullptr;
  for (const FigureModel& f : m.figures) {
    if (f.key == "peak_rss") rss = &f;
  }
  ASSERT_TRUE(rss);
  EXPECT_FALSE(rss->power_chosen);
  EXPECT_NEAR(rss->line->slope / (1 << 20), 30, 1e-3);
  EXPECT_NEAR(*rss->solve(500.0 * (1 << 20)), 15, 1e-3);
  report::SweepModelOptions o;
  o.limit = 500ull << 20;
  const auto words = report::solved_words(m, o);
  ASSERT_TRUE(words);
  EXPECT_EQ(words->substr(0, words->find(" (")), "workers \u2264 15 fit 500.0 MiB");
}

TEST(SweepModel, RepeatsGiveTheSpread) {
  std::vector<Trace> traces;
  for (double mib : {100, 110, 200, 210}) traces.push_back(trace_of(mib));
  const SweepModel m = sweep_model("n", {{1, {&traces[0], &traces[1]}, {}}, {2, {&traces[2], &traces[3]}, {}}});
  for (const FigureModel& f : m.figures) {
    if (f.key == "peak_rss") {
      EXPECT_NEAR(f.spread() / (1 << 20), 5, 1e-6);
    }
  }
}

}  // namespace
}  // namespace qprof
