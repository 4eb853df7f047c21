// SPDX-License-Identifier: Apache-2.0
#include "qprof/analysis/trend.hpp"

#include "qprof/analysis/metric.hpp"
#include "series_scan.hpp"
#include "trend_scan.hpp"

#include <algorithm>
#include <cmath>

namespace qprof::analysis {
using detail::scan_series;
using detail::trend_window;
using detail::TrendScan;
using trace::MemSample;
using trace::PssSample;
using trace::Trace;

namespace {

bool all_finite(const std::vector<double>& v) {
  for (double d : v) {
    if (!std::isfinite(d)) return false;
  }
  return true;
}

// 1 − SS_res / SS_tot of predictions against y. A y without variance leaves nothing for x to
// explain: 0, so that a flat series never reads as a perfect fit of a trend.
template <typename Predict>
double r_squared(const std::vector<double>& x, const std::vector<double>& y, Predict predict) {
  double mean = 0;
  for (double v : y) mean += v;
  mean /= static_cast<double>(y.size());
  double residual = 0, total = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    const double e = y[i] - predict(x[i]);
    residual += e * e;
    total += (y[i] - mean) * (y[i] - mean);
  }
  if (total == 0) return 0.0;
  return 1.0 - residual / total;
}

}  // namespace

std::optional<double> LineFit::solve(double y) const {
  if (!(slope > 0)) return std::nullopt;
  return (y - intercept) / slope;
}

std::optional<LineFit> fit_line(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.size() < 2 || !all_finite(x) || !all_finite(y)) return std::nullopt;
  const double n = static_cast<double>(x.size());
  double mx = 0, my = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    mx += x[i];
    my += y[i];
  }
  mx /= n;
  my /= n;
  // Centred sums: the times of a trace are Unix seconds, and raw sums of their squares would
  // lose the digits that matter.
  double sxx = 0, sxy = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxx += (x[i] - mx) * (x[i] - mx);
    sxy += (x[i] - mx) * (y[i] - my);
  }
  if (sxx == 0) return std::nullopt;
  LineFit f;
  f.slope = sxy / sxx;
  f.intercept = my - f.slope * mx;
  f.points = x.size();
  f.r2 = r_squared(x, y, [&](double v) { return f.at(v); });
  return f;
}

double PowerFit::at(double x) const { return coefficient * std::pow(x, exponent); }

std::optional<double> PowerFit::solve(double y) const {
  if (!(exponent > 0) || !(coefficient > 0) || !(y > 0)) return std::nullopt;
  return std::pow(y / coefficient, 1.0 / exponent);
}

std::optional<PowerFit> fit_power(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size()) return std::nullopt;
  std::vector<double> lx, ly;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!(x[i] > 0) || !(y[i] > 0)) return std::nullopt;
    lx.push_back(std::log(x[i]));
    ly.push_back(std::log(y[i]));
  }
  const auto logs = fit_line(lx, ly);
  if (!logs) return std::nullopt;
  PowerFit p;
  p.coefficient = std::exp(logs->intercept);
  p.exponent = logs->slope;
  p.points = x.size();
  p.r2 = r_squared(x, y, [&](double v) { return p.at(v); });
  return p;
}

std::optional<Trend> trend_of(const std::vector<MemSample>& series, Seconds t0, std::optional<Seconds> from,
                              std::optional<Seconds> to, const TrendRule& rule) {
  if (series.empty()) return std::nullopt;
  const auto [lo, hi] = trend_window(from.value_or(series.front().t - t0), to.value_or(series.back().t - t0), rule);
  TrendScan scan(t0, lo, hi);
  for (int pass = 0; pass < TrendScan::kPasses && scan.wants(pass); ++pass) {
    for (const MemSample& s : series) scan.add(pass, s);
    scan.end_pass(pass);
  }
  return scan.result(rule);
}

namespace {

// Fits the scans of each metric's series of a reduced trace, scans[i] over metrics[i]: three reads
// of its file, each sample given to the windows that hold it (each series is in time order).
void fit_from_file(const Trace& trace, const std::vector<Metric>& metrics, std::vector<std::vector<TrendScan>>& scans) {
  struct Sweep {
    std::vector<std::size_t> order, active;  // its scans by the start of their window; those open
    std::size_t next = 0;
  };
  std::vector<Sweep> sweeps(metrics.size());
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    for (std::size_t i = 0; i < scans[m].size(); ++i) sweeps[m].order.push_back(i);
    std::stable_sort(sweeps[m].order.begin(), sweeps[m].order.end(),
                     [&](std::size_t a, std::size_t b) { return scans[m][a].lo() < scans[m][b].lo(); });
  }
  for (int pass = 0; pass < TrendScan::kPasses; ++pass) {
    bool any = false;
    for (const auto& of_metric : scans) {
      for (const TrendScan& s : of_metric) any = any || s.wants(pass);
    }
    if (!any) break;
    for (Sweep& w : sweeps) w.next = 0, w.active.clear();
    scan_series(trace, metrics, [&](std::size_t m, const MemSample& s) {
      Sweep& w = sweeps[m];
      std::vector<TrendScan>& mine = scans[m];
      const Seconds x = s.t - trace.t0();
      while (w.next < w.order.size() && mine[w.order[w.next]].lo() <= x) w.active.push_back(w.order[w.next++]);
      std::erase_if(w.active, [&](std::size_t i) { return mine[i].hi() < x; });
      for (std::size_t i : w.active) {
        if (mine[i].wants(pass)) mine[i].add(pass, s);
      }
    });
    for (auto& of_metric : scans) {
      for (TrendScan& s : of_metric) {
        if (s.wants(pass)) s.end_pass(pass);
      }
    }
  }
}

// The trends of each metric's series over its windows (seconds since the start; unset: the
// series' own ends), in the order given.
std::vector<std::vector<std::optional<Trend>>> trends_over(const Trace& trace, const std::vector<Metric>& metrics,
                                                           const std::vector<std::vector<TrendSpan>>& windows,
                                                           const TrendRule& rule) {
  std::vector<std::vector<std::optional<Trend>>> out(metrics.size());
  std::vector<std::vector<TrendScan>> scans(metrics.size());
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    out[m].resize(windows[m].size());
    const std::vector<MemSample> series = metric_series(trace, metrics[m]);  // a reduced trace: its kept samples
    if (series.empty()) continue;
    if (!trace.reduced) {
      for (std::size_t i = 0; i < windows[m].size(); ++i)
        out[m][i] = trend_of(series, trace.t0(), windows[m][i].from, windows[m][i].to, rule);
      continue;
    }
    // Its first and last samples are kept: the ends of a whole window are the series'.
    for (const TrendSpan& w : windows[m]) {
      const auto [lo, hi] = trend_window(w.from.value_or(series.front().t - trace.t0()),
                                         w.to.value_or(series.back().t - trace.t0()), rule);
      scans[m].emplace_back(trace.t0(), lo, hi);
    }
  }
  if (!trace.reduced) return out;
  fit_from_file(trace, metrics, scans);
  for (std::size_t m = 0; m < metrics.size(); ++m) {
    for (std::size_t i = 0; i < scans[m].size(); ++i) out[m][i] = scans[m][i].result(rule);
  }
  return out;
}

}  // namespace

std::vector<std::optional<Trend>> stage_trends(const Trace& trace, Metric m, const std::vector<TrendSpan>& windows,
                                               const TrendRule& rule) {
  return trends_over(trace, {m}, {windows}, rule).front();
}

std::vector<SeriesTrend> run_trends(const Trace& trace, const TrendRule& rule) {
  std::optional<Trend> rss, footprint;
  if (trace.reduced) {
    const auto both = trends_over(trace, {Metric::rss, Metric::pss}, {{TrendSpan{}}, {TrendSpan{}}}, rule);
    rss = both[0].front();
    footprint = both[1].front();
  } else {
    // The series as written (a clock set back under mprof leaves them out of order).
    rss = trend_of(trace.mem, trace.t0(), {}, {}, rule);
    std::vector<MemSample> pss;
    pss.reserve(trace.pss.size());
    for (const PssSample& p : trace.pss) pss.push_back({p.t, p.pss});
    footprint = trend_of(pss, trace.t0(), {}, {}, rule);
  }
  std::vector<SeriesTrend> out;
  if (rss) out.push_back({"rss", "\u03a3 RSS", *rss});
  // Σ PSS is the footprint only where no cgroup charged the tree: with one, the charge is.
  const std::string title = trace.cgroup.empty() ? "footprint (\u03a3 PSS)" : "\u03a3 PSS";
  if (footprint) out.push_back({"pss", title, *footprint});
  return out;
}

}  // namespace qprof::analysis
