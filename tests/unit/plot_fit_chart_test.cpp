// SPDX-License-Identifier: Apache-2.0
// qprof fit's chart: nothing of the command reaches gnuplot as code, and gnuplot draws it.
#include "qprof/plot/fit_chart.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "qprof/common/find_program.hpp"

namespace qprof::plot {
namespace {

FitChart sample_chart(const std::string& command) {
  FitChart c;
  c.command = command;
  c.baseline_seconds = 0.3;
  c.cutoff_seconds = 1.2;
  c.points = {{250, 0.3, FitChartPoint::completed},
              {180, 0.8, FitChartPoint::completed},
              {120, 0, FitChartPoint::too_slow},
              {100, 0.1, FitChartPoint::oom_killed},
              {90, 0.1, FitChartPoint::failed}};
  c.marks = {{"runs in", 120}, {"within 4x", 180}, {"full speed", 250}};
  return c;
}

TEST(PlotFitChart, TheCommandIsNeverCode) {
  const std::string text =
      fit_script(sample_chart("x`touch /tmp/pwned`@macro\nset output '/etc/x'\""), "png").commands();
  // What follows the style template (whose comments quote gnuplot commands in backquotes).
  const std::string chart_part = text.substr(text.rfind("set termoption noenhanced"));
  EXPECT_EQ(chart_part.find('`'), std::string::npos) << chart_part;
  EXPECT_EQ(chart_part.find('@'), std::string::npos) << chart_part;
  EXPECT_EQ(chart_part.find("\nset output '/etc/x'"), std::string::npos) << "the newline does not end the title";
  EXPECT_NE(chart_part.find("title 'OOM-killed'"), std::string::npos);
}

// A limit's label stands clear of its dashed line: left of it (0.8 characters drew it over the
// line), right of it where the line is the chart's left edge.
TEST(PlotFitChart, EachLimitsLabelStandsBesideItsLine) {
  const std::string text = fit_script(sample_chart("./job"), "png").commands();
  EXPECT_NE(text.find("\"runs in 120 MiB\" at first 120, graph 0.97 rotate by 90 right offset -1.5,0"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"full speed 250 MiB\" at first 250, graph 0.97 rotate by 90 right offset -1.5,0"),
            std::string::npos);
  FitChart leftmost = sample_chart("./job");
  leftmost.points.resize(2);  // nothing below the smallest limit it runs in
  leftmost.marks = {{"runs in", 180}, {"full speed", 250}};
  const std::string edge = fit_script(leftmost, "png").commands();
  EXPECT_NE(edge.find("\"runs in 180 MiB\" at first 180, graph 0.97 rotate by 90 right offset 1.5,0"),
            std::string::npos)
      << edge;
}

TEST(PlotFitChart, GnuplotDrawsIt) {
  if (find_program("gnuplot").empty()) GTEST_SKIP() << "no gnuplot (gnuplot-nox)";
  const std::string out =
      (std::filesystem::temp_directory_path() / ("qprof-fit-chart-" + std::to_string(getpid()) + ".png")).string();
  ASSERT_TRUE(plot_fit(sample_chart("./job --workers 4"), out, {}));
  std::ifstream in(out, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), {});
  EXPECT_GT(bytes.size(), 1000u);
  EXPECT_EQ(bytes.substr(1, 3), "PNG");
  std::filesystem::remove(out);
  EXPECT_FALSE(plot_fit(sample_chart("x"), out + ".txt", {})) << "a file of another kind";
}

// A job with nothing to search: every run at one limit. gnuplot draws it without a word (it
// warned of an empty x range, which fit passed on to the user).
TEST(PlotFitChart, RunsAtOneLimitDrawWithoutAWarning) {
  if (find_program("gnuplot").empty()) GTEST_SKIP() << "no gnuplot (gnuplot-nox)";
  FitChart c = sample_chart("./job");
  c.points = {{107.129, 0.3, FitChartPoint::completed}};
  c.marks = {{"full speed", 107.129}};
  const std::string out =
      (std::filesystem::temp_directory_path() / ("qprof-fit-one-" + std::to_string(getpid()) + ".png")).string();
  std::vector<std::string> warnings;
  ASSERT_TRUE(plot_fit(c, out, [&](const std::string& w) { warnings.push_back(w); }));
  std::filesystem::remove(out);
  EXPECT_TRUE(warnings.empty()) << warnings.front();
}

}  // namespace
}  // namespace qprof::plot
