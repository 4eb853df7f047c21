// SPDX-License-Identifier: Apache-2.0
#include "qprof/analysis/sweep_model.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "qprof/analysis/metric.hpp"
#include "qprof/analysis/peaks.hpp"
#include "qprof/analysis/compare.hpp"
#include "qprof/analysis/timeline.hpp"

namespace qprof::analysis {
using trace::Trace;

namespace {

struct FigureSource {
  const char* key;
  const char* title;
  bool bytes;
  std::function<std::optional<double>(const Trace&, const FitLimits&)> read;
};

std::optional<double> peak_of(const Trace& t, Metric m) {
  const auto p = find_peak(t, m);
  if (!p) return std::nullopt;
  return static_cast<double>(p->bytes);
}

const std::vector<FigureSource>& figure_sources() {
  static const std::vector<FigureSource> sources = {
      // The footprint as every summary gives it: the tree's own cgroup charge, else Σ PSS.
      {"footprint", "footprint", true, [](const Trace& t, const FitLimits&) { return peak_of(t, Metric::footprint); }},
      {"unreclaimable", "unreclaimable peak", true,
       [](const Trace& t, const FitLimits&) { return peak_of(t, Metric::unreclaimable); }},
      {"peak_rss", "\u03a3 RSS peak", true, [](const Trace& t, const FitLimits&) { return peak_of(t, Metric::rss); }},
      {"duration", "duration", false,
       [](const Trace& t, const FitLimits&) -> std::optional<double> { return trace_duration(t); }},
      // qprof fit's limits (sweep --fit): what a memory limit must be, measured by running under one.
      {"fit_runs_in", "fit: smallest limit", true, [](const Trace&, const FitLimits& f) { return f.runs_in; }},
      {"fit_full_speed", "fit: full-speed limit", true, [](const Trace&, const FitLimits& f) { return f.full_speed; }},
  };
  return sources;
}

}  // namespace

double FigureModel::r2() const {
  if (power_chosen && power) return power->r2;
  return line ? line->r2 : 0.0;
}

double FigureModel::predict(double v) const {
  if (power_chosen && power) return power->at(v);
  return line ? line->at(v) : 0.0;
}

std::optional<double> FigureModel::solve(double limit) const {
  if (power_chosen && power) return power->solve(limit);
  return line ? line->solve(limit) : std::nullopt;
}

double FigureModel::spread() const {
  if (low.empty()) return 0;
  double sum = 0;
  for (std::size_t i = 0; i < low.size(); ++i) sum += (high[i] - low[i]) / 2;
  return sum / static_cast<double>(low.size());
}

SweepModel sweep_model(const std::string& parameter, const std::vector<SweepPointRuns>& points) {
  SweepModel m;
  m.parameter = parameter;
  std::vector<SweepPointRuns> sorted = points;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.value < b.value; });
  for (const SweepPointRuns& p : sorted) m.integer_values = m.integer_values && p.value == std::floor(p.value);
  for (const FigureSource& source : figure_sources()) {
    FigureModel f;
    f.key = source.key;
    f.title = source.title;
    f.bytes = source.bytes;
    for (const SweepPointRuns& p : sorted) {
      std::vector<double> values;
      for (std::size_t i = 0; i < p.runs.size(); ++i) {
        const FitLimits none;
        const FitLimits& fit = p.fits.size() == p.runs.size() ? p.fits[i] : none;
        if (const auto v = source.read(*p.runs[i], fit)) values.push_back(*v);
      }
      const auto s = spread_of(values);
      if (!s) continue;
      f.x.push_back(p.value);
      f.y.push_back(s->median);
      f.low.push_back(s->min);
      f.high.push_back(s->max);
    }
    if (f.x.empty()) continue;
    f.line = fit_line(f.x, f.y);
    f.power = fit_power(f.x, f.y);
    f.power_chosen = f.line && f.power && f.power->r2 > f.line->r2 + FigureModel::kPowerMargin;
    m.figures.push_back(std::move(f));
  }
  return m;
}

}  // namespace qprof::analysis
