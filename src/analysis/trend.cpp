// SPDX-License-Identifier: Apache-2.0
#include "qprof/analysis/trend.hpp"

#include <algorithm>
#include <cmath>

namespace qprof::analysis {
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
  const Seconds first = from.value_or(series.front().t - t0);
  const Seconds last = to.value_or(series.back().t - t0);
  const Seconds lo = first + (last - first) * rule.startup, hi = last - (last - first) * rule.trim;
  std::vector<double> x, y;
  for (const MemSample& s : series) {
    const Seconds t = s.t - t0;
    if (t < lo || t > hi) continue;
    x.push_back(t);
    y.push_back(static_cast<double>(s.bytes));
  }
  if (x.size() < kMinTrendReadings) return std::nullopt;
  const auto fit = fit_line(x, y);
  if (!fit) return std::nullopt;
  Trend tr;
  tr.fit = *fit;
  tr.from = x.front();
  tr.to = x.back();
  tr.samples = x.size();
  // The two halves, by time: has the growth kept on, as fast?
  const Seconds middle = (tr.from + tr.to) / 2;
  std::vector<double> ex, ey, lx, ly;
  for (std::size_t i = 0; i < x.size(); ++i) {
    (x[i] < middle ? ex : lx).push_back(x[i]);
    (x[i] < middle ? ey : ly).push_back(y[i]);
  }
  if (const auto early = fit_line(ex, ey)) tr.early_slope = early->slope;
  if (const auto late = fit_line(lx, ly)) tr.late_slope = late->slope;
  const double growth = tr.growth();
  const double level = std::max(0.0, tr.fit.at(tr.from));
  tr.significant = tr.samples >= rule.min_samples && tr.to - tr.from >= rule.min_span && tr.fit.slope > 0 &&
                   tr.fit.r2 >= rule.min_r2 && tr.late_slope >= rule.min_late_share * tr.fit.slope &&
                   tr.late_slope >= rule.min_steady_share * tr.early_slope &&
                   growth >= static_cast<double>(rule.min_growth) && growth >= rule.min_growth_share * level;
  return tr;
}

std::vector<SeriesTrend> run_trends(const Trace& trace, const TrendRule& rule) {
  std::vector<SeriesTrend> out;
  const Seconds t0 = trace.t0();
  if (auto rss = trend_of(trace.mem, t0, {}, {}, rule)) out.push_back({"rss", "\u03a3 RSS", *rss});
  std::vector<MemSample> pss;
  pss.reserve(trace.pss.size());
  for (const PssSample& p : trace.pss) pss.push_back({p.t, p.pss});
  // Σ PSS is the footprint only where no cgroup charged the tree: with one, the charge is.
  const std::string title = trace.cgroup.empty() ? "footprint (\u03a3 PSS)" : "\u03a3 PSS";
  if (auto footprint = trend_of(pss, t0, {}, {}, rule)) out.push_back({"pss", title, *footprint});
  return out;
}

}  // namespace qprof::analysis
