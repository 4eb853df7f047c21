// SPDX-License-Identifier: Apache-2.0
// The sweep chart's program: a limit far above the runs (the machine's MemTotal) is a note under
// the chart with the solved value, so that the axis fits the runs; a near one stays a line.
#include "qprof/plot/sweep_chart.hpp"

#include <gtest/gtest.h>

#include <algorithm>

namespace qprof::plot {
namespace {

constexpr double kMiB = 1 << 20;

// Runs of 24, 44 and 64 MiB at n = 20, 40, 60: 4 MiB + 1 MiB × n, exactly.
analysis::FigureModel footprint() {
  analysis::FigureModel f;
  f.key = "footprint";
  f.title = "footprint";
  f.x = {20, 40, 60};
  for (double x : f.x) f.y.push_back((4 + x) * kMiB);
  f.low = f.high = f.y;
  f.line = analysis::LineFit{kMiB, 4 * kMiB, 1.0, 3};
  return f;
}

// The largest y of every data set drawn.
double data_top(const Script& s) {
  double top = 0;
  for (const ScriptChunk& c : s.chunks) {
    for (const auto& set : c.data) {
      for (const auto& [x, y] : set) top = std::max(top, y);
    }
  }
  return top;
}

TEST(PlotSweepChart, AFarLimitIsANoteAndTheAxisFitsTheRuns) {
  const analysis::SweepModel model{"n", true, {footprint()}};
  const Bytes limit = Bytes{23} * (1ull << 30) + (1ull << 29);  // 23.5 GiB, a MemTotal
  const Script s = sweep_script(model, model.figures[0], limit, 24000, Format::svg);
  const std::string text = s.commands();
  EXPECT_NE(text.find("set ylabel \"footprint (MiB)\""), std::string::npos) << text;
  // The fit drawn to 1.15 × 60: 4 + 69 MiB at most; nothing near the limit.
  EXPECT_LE(data_top(s), 73.0 + 1e-9);
  EXPECT_GT(data_top(s), 64.0);
  EXPECT_NE(text.find("set label 1 \"limit 23.5 GiB (off the chart): n \u2264 24000\" at character"), std::string::npos)
      << text;
  EXPECT_EQ(text.find("ls 26"), std::string::npos) << "no limit line";
}

TEST(PlotSweepChart, ANearLimitStaysALine) {
  const analysis::SweepModel model{"n", true, {footprint()}};
  const Script s = sweep_script(model, model.figures[0], Bytes{100} << 20, 96, Format::svg);
  const std::string text = s.commands();
  EXPECT_NE(text.find("set ylabel \"footprint (MiB)\""), std::string::npos) << text;
  EXPECT_DOUBLE_EQ(data_top(s), 100.0);  // the limit's line
  EXPECT_NE(text.find("limit 100.0 MiB (n \u2264 96, off the chart)"), std::string::npos) << text;
  EXPECT_EQ(text.find("set label"), std::string::npos) << text;
}

TEST(PlotSweepChart, ATextChartIsRefused) {
  EXPECT_FALSE(sweep_chart_output("-"));
  EXPECT_FALSE(sweep_chart_output("model.gif"));
  EXPECT_TRUE(sweep_chart_output("model.svg"));
  EXPECT_TRUE(sweep_chart_output("model.PNG"));
}

}  // namespace
}  // namespace qprof::plot
