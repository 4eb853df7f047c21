// SPDX-License-Identifier: Apache-2.0
#include "qprof/report/trend.hpp"

#include <algorithm>
#include <cmath>

#include "qprof/common/number_text.hpp"
#include "qprof/common/units.hpp"

namespace qprof::report {
using analysis::Metric;
using analysis::run_trends;
using analysis::SeriesTrend;
using analysis::stage_stats;
using analysis::stage_trends;
using analysis::StageStats;
using analysis::Trend;
using analysis::TrendSpan;
using trace::MemSample;
using trace::Trace;

namespace {

std::string r2_words(double r2) { return printf_number("R\u00b2 %.2f", r2); }

Column machine_only(std::string key, std::string title, Kind kind) {
  Column c = Column::of(std::move(key), std::move(title), kind);
  c.human = false;
  return c;
}

}  // namespace

std::string rate_words(double bytes_per_second, bool signed_rate) {
  const double magnitude = std::fabs(bytes_per_second);
  const bool per_second = magnitude >= 1024.0 * 1024.0;
  const std::string size = human_bytes(bytes_from_double(per_second ? magnitude : magnitude * 60));
  std::string sign;
  if (signed_rate && size.find_first_not_of("0. B") != std::string::npos) sign = bytes_per_second < 0 ? "-" : "+";
  return sign + size + (per_second ? "/s" : "/min");
}

RateUnit rate_unit(double largest_bytes_per_second) {
  const double magnitude = std::fabs(largest_bytes_per_second);
  RateUnit u;
  u.per_second = magnitude >= 1024.0 * 1024.0;
  u.size = auto_unit(bytes_from_double(u.per_second ? magnitude : magnitude * 60), Unit::KiB);
  return u;
}

std::string rate_in(double bytes_per_second, RateUnit u, bool signed_rate) {
  const double shown = (u.per_second ? bytes_per_second : bytes_per_second * 60) / unit_bytes(u.size);
  const double magnitude = std::fabs(shown);
  const std::string digits = printf_number(magnitude < 10 ? "%.2f" : "%.1f", magnitude);
  std::string sign;
  if (signed_rate && digits.find_first_not_of("0.") != std::string::npos) sign = shown < 0 ? "-" : "+";
  return sign + digits + " " + std::string(unit_name(u.size)) + (u.per_second ? "/s" : "/min");
}

std::string growth_words(const Trend& trend) {
  return "grows " + rate_words(trend.bytes_per_second()) + " (" + r2_words(trend.fit.r2) + ") from " +
         human_seconds(trend.from) + " to " + human_seconds(trend.to);
}

std::optional<std::string> growth_summary(const Trace& trace) {
  std::string out;
  for (const SeriesTrend& s : run_trends(trace)) {
    if (!s.trend.significant) continue;
    out += (out.empty() ? "" : "; ") + s.title + " " + growth_words(s.trend);
  }
  if (out.empty()) return std::nullopt;
  return out;
}

void add_trend_facts(Document& doc, const Trace& trace) {
  for (const SeriesTrend& s : run_trends(trace)) {
    const std::string key = "trend_" + s.key;
    const Trend& t = s.trend;
    if (t.significant) {
      doc.facts.push_back({Column::of(key, "trend of " + s.title, Kind::text), Cell::string(growth_words(t))});
    }
    doc.facts.push_back(
        {machine_only(key + "_slope_bytes_per_s", "", Kind::count), Cell::number(t.bytes_per_second())});
    doc.facts.push_back({machine_only(key + "_r2", "", Kind::share), Cell::number(t.fit.r2)});
    doc.facts.push_back({machine_only(key + "_from", "", Kind::seconds), Cell::number(t.from)});
    doc.facts.push_back({machine_only(key + "_to", "", Kind::seconds), Cell::number(t.to)});
    doc.facts.push_back({machine_only(key + "_significant", "", Kind::flag), Cell::number(t.significant ? 1 : 0)});
  }
}

void add_stage_trends(Table& stages, const Trace& trace, Metric metric) {
  Column words = Column::of("slope", "slope", Kind::text);
  words.machine = false;
  words.narrow = 3;  // the first to go where the table must fit a terminal
  stages.columns.push_back(words);
  stages.columns.push_back(machine_only("slope_bytes_per_s", "slope", Kind::count));
  stages.columns.push_back(machine_only("slope_r2", "slope R\u00b2", Kind::share));
  stages.columns.push_back(machine_only("slope_significant", "growth significant", Kind::flag));
  const std::vector<StageStats> stats = stage_stats(trace, metric);
  std::vector<TrendSpan> windows;
  for (std::size_t i = 0; i < stages.rows.size() && i < stats.size(); ++i)
    windows.push_back({stats[i].start, stats[i].end});
  std::vector<std::optional<Trend>> trends = stage_trends(trace, metric, windows);
  trends.resize(stages.rows.size());
  double largest = 0;
  for (const std::optional<Trend>& t : trends) {
    if (t) largest = std::max(largest, std::fabs(t->bytes_per_second()));
  }
  // One unit down the column, from its largest rate: rows compare at a glance.
  const RateUnit unit = rate_unit(largest);
  for (std::size_t i = 0; i < stages.rows.size(); ++i) {
    const std::optional<Trend>& t = trends[i];
    if (!t) {
      stages.rows[i].insert(stages.rows[i].end(), 4, Cell{});
      continue;
    }
    stages.rows[i].push_back(
        Cell::string(rate_in(t->bytes_per_second(), unit, true) + " (" + r2_words(t->fit.r2) + ")"));
    stages.rows[i].push_back(Cell::number(t->bytes_per_second()));
    stages.rows[i].push_back(Cell::number(t->fit.r2));
    stages.rows[i].push_back(Cell::number(t->significant ? 1 : 0));
  }
}

}  // namespace qprof::report
