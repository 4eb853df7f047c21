// SPDX-License-Identifier: Apache-2.0
// plot --trend: each trace's fitted trend (analysis/trend.hpp, fitted on the whole trace by
// plot()) as a dashed segment over the window it was fitted on, as mprof plot -s draws its slope.
#include <cmath>
#include <cstdio>

#include "chart_builder.hpp"
#include "qprof/analysis/trend.hpp"
#include "qprof/plot/escape.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::plot {
using analysis::run_trends;
using analysis::SeriesTrend;
using analysis::Trend;
using trace::Trace;

namespace {
constexpr double kMinDrawnR2 = 0.5;
}  // namespace

std::vector<TrendLine> fitted_trends(const std::string& path, Seconds t0, const WarningSink& skipped) {
  const Trace trace = trace::read_trace(path);
  // The fit's times count from the trace's own start; the chart's from the reduction's t0.
  const Seconds shift = trace.t0() - t0;
  std::vector<TrendLine> lines;
  const std::vector<SeriesTrend> trends = run_trends(trace);
  if (trends.empty()) skipped("no trend drawn: too few samples between its start-up and tear-down to fit one");
  for (const SeriesTrend& s : trends) {
    const Trend& t = s.trend;
    // A line that explains little of the series (a flat run's R² near 0) says nothing: not drawn.
    if (!std::isfinite(t.fit.r2)) {
      skipped("trend of " + s.title + " not drawn: the series is flat");
      continue;
    }
    if (!(t.fit.r2 >= kMinDrawnR2)) {
      char r2[64];
      std::snprintf(r2, sizeof r2, "R\u00b2 %.2f, below %.1f", t.fit.r2, kMinDrawnR2);
      skipped("trend of " + s.title + " not drawn: a line explains little of it (" + r2 + ")");
      continue;
    }
    lines.push_back(
        {s.title, {t.from + shift, t.fit.at(t.from)}, {t.to + shift, t.fit.at(t.to)}, t.bytes_per_second(), t.fit.r2});
  }
  return lines;
}

}  // namespace qprof::plot

namespace qprof::plot::chart_detail {

void Builder::trend_lines(Draft& d, const TraceInput& in, int color, double unit) {
  for (const TrendLine& line : in.trends) {
    const double per_second = line.bytes_per_second;
    // The rate's unit: per second from 1 MiB/s, else per minute, as the summary says it.
    const bool seconds = per_second >= 1024.0 * 1024.0 || per_second <= -1024.0 * 1024.0;
    const double shown = seconds ? per_second : per_second * 60;
    std::string rate =
        (shown < 0 ? "-" : "+") + bytes_text(shown < 0 ? -shown : shown, units_.chosen) + (seconds ? "/s" : "/min");
    char r2[32];
    std::snprintf(r2, sizeof r2, " (R\u00b2 %.2f)", line.r2);
    std::string title = "trend of " + line.series + " " + rate + r2;
    if (all_.size() > 1) title = display_text(in.label, 24) + ": " + title;
    ChartSeries s;
    s.role = Role::trend;
    s.color = color;
    s.dashed = true;
    s.title = std::move(title);
    s.data = {{line.from.t, line.from.v / unit}, {line.to.t, line.to.v / unit}};
    add_series(d, std::move(s));
  }
}

}  // namespace qprof::plot::chart_detail
