// SPDX-License-Identifier: Apache-2.0
// Trends: how memory moves with time over a run (a leak's slope), and how a figure moves with a
// parameter over a sweep (a model to predict and solve with). Least squares, its R², a power law
// fitted in log-log space, and the rule that decides when a run's growth is worth saying.
// Pure functions: no I/O, no formatting (report/trend.hpp words them).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "qprof/analysis/metric.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof::analysis {

// y = intercept + slope × x, by ordinary least squares.
struct LineFit {
  double slope = 0;
  double intercept = 0;
  double r2 = 0;  // 1 − SS_res / SS_tot; 0 for a y without variance (nothing to explain)
  std::size_t points = 0;
  double at(double x) const { return intercept + slope * x; }
  // The largest x whose predicted y is at most `y` (slope > 0), nullopt when the line never
  // rises (any x fits, or none).
  std::optional<double> solve(double y) const;
};
// nullopt with fewer than two distinct x, or any value not finite.
std::optional<LineFit> fit_line(const std::vector<double>& x, const std::vector<double>& y);

// y = coefficient × x^exponent, fitted by least squares on (ln x, ln y); its R² is computed on y
// itself, so that it compares with a line's.
struct PowerFit {
  double coefficient = 0;
  double exponent = 0;
  double r2 = 0;
  std::size_t points = 0;
  double at(double x) const;
  std::optional<double> solve(double y) const;  // exponent > 0 only
};
// nullopt unless every x and y is > 0 and there are two distinct x.
std::optional<PowerFit> fit_power(const std::vector<double>& x, const std::vector<double>& y);

// ── A run's trend over time ─────────────────────────────────────────────────────────────────

// When a trend is said to be growth (the summary's and report's "grows … MiB/min"). Each threshold
// rules out a shape that is not a leak:
//  - the first `startup` of the time is dropped (imports, a CUDA context, a model's load: growth
//    that a leak check must not take for a leak), and the last `trim` (tear-down, as the ATLAS
//    pilot's leak check on prmon's output does);
//  - the growth is steady: the later half of the window grows at least `min_steady_share` as fast
//    as the earlier half (a start-up that slows down is not);
//  - R² ≥ min_r2: a single step reaches at most R² 0.75 (a step in the middle of the window), a
//    spike far less, so neither is taken for growth;
//  - the slope over the later half of the window is at least `min_late_share` of the whole's: growth
//    that stopped (a ramp, then a plateau) is a warm-up, not a leak;
//  - the window spans ≥ min_span seconds and holds ≥ min_samples samples;
//  - the fitted growth over the window is ≥ min_growth bytes and ≥ min_growth_share of the fitted
//    level at its start: noise on a large process is no leak.
struct TrendRule {
  double startup = 0.25;
  double trim = 0.05;
  double min_steady_share = 0.5;
  double min_r2 = 0.8;
  double min_late_share = 0.5;
  Seconds min_span = 3.0;
  std::size_t min_samples = 8;
  Bytes min_growth = 16ull << 20;
  double min_growth_share = 0.05;
};

struct Trend {
  LineFit fit;       // bytes against seconds since the trace's start
  Seconds from = 0;  // the window fitted, seconds since the trace's start
  Seconds to = 0;
  std::size_t samples = 0;
  double early_slope = 0;  // over the earlier half of the window (bytes/s)
  double late_slope = 0;   // over the later half of the window (bytes/s)
  bool significant = false;
  double bytes_per_second() const { return fit.slope; }
  double growth() const { return fit.slope * (to - from); }  // fitted, over the window
};

// A line through fewer readings says nothing of a trend (through two it fits exactly, R² 1.00):
// no slope is given from fewer.
inline constexpr std::size_t kMinTrendReadings = 5;

// The trend of a series inside [from, to] (seconds since t0; the whole series by default):
// nullopt with fewer than kMinTrendReadings samples left after the trim.
std::optional<Trend> trend_of(const std::vector<trace::MemSample>& series, Seconds t0, std::optional<Seconds> from = {},
                              std::optional<Seconds> to = {}, const TrendRule& rule = {});

// The series a run's trend is fitted on: Σ RSS (MEM lines) always, the PSS footprint where the
// trace has PSS readings.
struct SeriesTrend {
  std::string key;    // "rss", "pss": machine keys
  std::string title;  // "Σ RSS", "footprint (Σ PSS)"
  Trend trend;
};
std::vector<SeriesTrend> run_trends(const trace::Trace& trace, const TrendRule& rule = {});

// A window of a trend: seconds since the trace's start; unset, the series' own first or last time.
struct TrendSpan {
  std::optional<Seconds> from, to;
};
// trend_of over metric m's series (metric_series) inside each window, in their order: the stage
// table's slopes. A reduced trace (trace::read_trace_reduced) is read again, three times whatever
// the number of windows, the same figures as from the whole trace.
std::vector<std::optional<Trend>> stage_trends(const trace::Trace& trace, Metric m,
                                               const std::vector<TrendSpan>& windows, const TrendRule& rule = {});

}  // namespace qprof::analysis
