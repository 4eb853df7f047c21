// SPDX-License-Identifier: Apache-2.0
#include "qprof/analysis/metric.hpp"
#include "qprof/analysis/dirs.hpp"
#include "qprof/analysis/metric_table.hpp"

#include <algorithm>

#include "qprof/common/units.hpp"
#include "qprof/trace/format.hpp"
#include "series.hpp"

namespace qprof::analysis {
using trace::MemSample;
using trace::Trace;

using namespace detail;

// ── Metrics ─────────────────────────────────────────────────────────────────────────────────

const MetricInfo& metric_info(Metric m) {
  if (const MetricInfo* dir = dir_metric_info(m)) return *dir;
  if (m.kind == MetricKind::dir) return metric_rows().front().info;  // not a registered directory
  return metric_row(m.kind).info;
}

std::optional<Metric> parse_metric(std::string_view name) {
  if (name.size() > 4 && name.substr(0, 4) == "dir:") return dir_metric(name.substr(4));
  if (const MetricRow* r = metric_row_named(name)) return r->info.metric;
  return std::nullopt;
}

const std::vector<Metric>& all_metrics() {
  static const std::vector<Metric> all = [] {
    std::vector<Metric> v;
    for (const MetricRow& r : metric_rows()) {
      if (r.info.metric.kind != MetricKind::dir) v.push_back(r.info.metric);
    }
    return v;
  }();
  return all;
}

std::string metric_names(const std::vector<Metric>& metrics) {
  std::string out;
  for (Metric m : metrics) {
    if (!out.empty()) out += ", ";
    out += metric_info(m).name;
  }
  return out;
}

bool has_metric(const Trace& t, Metric m) { return metric_row(m.kind).has(t, pick_context(t, m)); }

std::vector<Metric> available_metrics(const Trace& t) {
  std::vector<Metric> out;
  for (Metric m : all_metrics()) {
    if (has_metric(t, m)) out.push_back(m);
  }
  std::size_t dirs = 0;
  for (const DirGrowth& g : dir_growths(t)) {
    if (dirs++ == kMaxDirMetrics) break;
    out.push_back(dir_metric(g.name));
  }
  return out;
}

std::vector<MemSample> metric_series(const Trace& t, Metric m) {
  std::vector<MemSample> out = series_as_written(t, m);
  // Writers append in time order; a wall clock set back under mprof could break it.
  const auto by_time = [](const MemSample& a, const MemSample& b) { return a.t < b.t; };
  if (!std::is_sorted(out.begin(), out.end(), by_time)) std::stable_sort(out.begin(), out.end(), by_time);
  return out;
}

}  // namespace qprof::analysis
