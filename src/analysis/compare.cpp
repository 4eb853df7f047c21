// SPDX-License-Identifier: Apache-2.0
#include "qprof/analysis/metric.hpp"
#include "qprof/analysis/dirs.hpp"
#include "qprof/analysis/timeline.hpp"
#include "qprof/analysis/peaks.hpp"
#include "qprof/analysis/budgets.hpp"
#include "qprof/analysis/compare.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <stdexcept>
#include <unordered_set>

#include "qprof/common/units.hpp"
#include "qprof/trace/format.hpp"
#include "series.hpp"

namespace qprof::analysis {
using trace::Trace;

using namespace detail;

// ── Comparison ──────────────────────────────────────────────────────────────────────────────

std::optional<Spread> spread_of(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  const double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
  return Spread{median, v.front(), v.back()};
}

namespace {

// What one run gives for a column; nullopt where the trace does not have it.
using Extract = std::function<std::optional<double>(const Trace&)>;

// The columns of a comparison as they are added, each with how a run gives its value.
struct ColumnList {
  std::vector<CompareColumn>& columns;
  std::vector<Extract> extract;

  void add(CompareColumn col, Extract e) {
    columns.push_back(std::move(col));
    extract.push_back(std::move(e));
  }
};

template <typename Pred>
bool any_run(const std::vector<CompareEntry>& entries, Pred pred) {
  for (const CompareEntry& e : entries) {
    for (const Trace* t : e.runs) {
      if (pred(*t)) return true;
    }
  }
  return false;
}

void add_peak_column(ColumnList& list, Metric m) {
  list.add({"peak_" + std::string(metric_info(m).name), "peak " + std::string(metric_info(m).title),
            CompareColumn::Kind::bytes, m, ""},
           [m](const Trace& t) -> std::optional<double> {
             const auto p = find_peak(t, m);
             if (!p) return std::nullopt;
             return static_cast<double>(p->bytes);
           });
}

// The peak of every metric one run or more has; rss always.
void add_metric_peak_columns(ColumnList& list, const std::vector<CompareEntry>& entries) {
  for (Metric m : all_metrics()) {
    if (m != Metric::rss && !any_run(entries, [m](const Trace& t) { return has_metric(t, m); })) continue;
    add_peak_column(list, m);
  }
}

// Watched directories: every name a trace has, in the order met.
// At most kMaxDirMetrics names: each is two columns and a pass over every run's directories.
std::vector<std::string> watched_dir_names(const std::vector<CompareEntry>& entries) {
  std::vector<std::string> dir_names;
  std::unordered_set<std::string> named;
  for (const CompareEntry& e : entries) {
    for (const Trace* t : e.runs) {
      for (const DirGrowth& g : dir_growths(*t)) {
        if (dir_names.size() == kMaxDirMetrics) break;
        if (named.insert(g.name).second) dir_names.push_back(g.name);
      }
    }
  }
  return dir_names;
}

// The peak size (a dir:NAME metric) and the growth of every watched directory.
void add_dir_columns(ColumnList& list, const std::vector<CompareEntry>& entries) {
  for (const std::string& name : watched_dir_names(entries)) {
    add_peak_column(list, dir_metric(name));
    list.add({"growth_dir:" + name, "growth dir " + name, CompareColumn::Kind::bytes, std::nullopt, ""},
             [name](const Trace& t) -> std::optional<double> {
               for (const DirGrowth& g : dir_growths(t)) {
                 if (g.name == name) return static_cast<double>(g.growth);
               }
               return std::nullopt;
             });
  }
}

// Total disk read and write, where a run has IO.
void add_disk_columns(ColumnList& list, const std::vector<CompareEntry>& entries) {
  if (!any_run(entries, [](const Trace& t) { return !t.io.empty(); })) return;
  list.add({"disk_read", "disk read", CompareColumn::Kind::bytes, std::nullopt, ""},
           [](const Trace& t) -> std::optional<double> {
             if (t.io.empty()) return std::nullopt;
             return static_cast<double>(t.io.back().read_bytes);
           });
  list.add({"disk_write", "disk write", CompareColumn::Kind::bytes, std::nullopt, ""},
           [](const Trace& t) -> std::optional<double> {
             if (t.io.empty()) return std::nullopt;
             return static_cast<double>(t.io.back().write_bytes);
           });
}

// The stage names that get a column, in the order met; `left_out` counts those past the limit.
// At most kMaxStageColumns names, the first met: each column is a pass over every run's
// samples, so 100 000 stage names made a comparison quadratic (and unreadable).
std::vector<std::string> stage_column_names(const std::vector<CompareEntry>& entries, std::size_t& left_out) {
  std::vector<std::string> names;
  std::unordered_set<std::string> named;
  for (const CompareEntry& e : entries) {
    for (const Trace* t : e.runs) {
      for (std::string& n : stage_names(*t)) {
        if (named.count(n)) continue;
        if (names.size() == kMaxStageColumns) {
          ++left_out;
          named.insert(n);
          continue;
        }
        named.insert(n);
        names.push_back(std::move(n));
      }
    }
  }
  return names;
}

// The peak of `metric` inside each stage name.
void add_stage_columns(ColumnList& list, const std::vector<CompareEntry>& entries, Metric metric,
                       std::size_t& left_out) {
  for (const std::string& name : stage_column_names(entries, left_out)) {
    list.add({"stage_peak", "peak in " + name, CompareColumn::Kind::bytes, metric, name},
             [metric, name](const Trace& t) -> std::optional<double> {
               const auto p = stage_peak(t, metric, name);
               if (!p) return std::nullopt;
               return static_cast<double>(p->bytes);
             });
  }
}

// One row per entry: the spread of each column's value over the entry's runs.
void add_rows(Comparison& c, const std::vector<CompareEntry>& entries, const std::vector<Extract>& extract) {
  for (const CompareEntry& e : entries) {
    std::vector<CompareValue> row;
    for (const Extract& x : extract) {
      std::vector<double> values;
      for (const Trace* t : e.runs) {
        if (const auto v = x(*t)) values.push_back(*v);
      }
      row.push_back({spread_of(std::move(values)), false, std::nullopt});
    }
    c.rows.push_back(std::move(row));
  }
}

// Each column's lowest value and every value's ratio to the first row's.
void mark_lowest_and_ratios(Comparison& c, const std::vector<CompareEntry>& entries) {
  for (std::size_t col = 0; col < c.columns.size(); ++col) {
    // A summed row (a job's total) is no candidate: neither lowest nor a ratio to a rank.
    std::optional<double> lowest, highest;
    for (std::size_t r = 0; r < c.rows.size(); ++r) {
      const auto& v = c.rows[r][col].value;
      if (!v || entries[r].summed) continue;
      lowest = std::min(lowest.value_or(v->median), v->median);
      highest = std::max(highest.value_or(v->median), v->median);
    }
    // A mark says "this one is lower": where every row has the same value, none is.
    const bool differ = lowest && *highest > *lowest;
    const double first = c.rows.empty() || !c.rows.front()[col].value ? 0.0 : c.rows.front()[col].value->median;
    for (std::size_t r = 0; r < c.rows.size(); ++r) {
      CompareValue& v = c.rows[r][col];
      if (!v.value || entries[r].summed) continue;
      v.lowest = differ && v.value->median == *lowest;
      if (first > 0) v.ratio = v.value->median / first;
    }
  }
}

}  // namespace

Comparison compare(const std::vector<CompareEntry>& entries, Metric metric, bool stages) {
  Comparison c;
  c.metric = metric;
  ColumnList list{c.columns, {}};
  list.add({"duration", "duration", CompareColumn::Kind::seconds, std::nullopt, ""},
           [](const Trace& t) -> std::optional<double> { return trace_duration(t); });
  add_metric_peak_columns(list, entries);
  add_dir_columns(list, entries);
  add_disk_columns(list, entries);
  if (stages && metric_info(metric).windowed) add_stage_columns(list, entries, metric, c.stages_left_out);
  add_rows(c, entries, list.extract);
  mark_lowest_and_ratios(c, entries);
  return c;
}

std::optional<std::size_t> peak_column(const Comparison& c, Metric m) {
  for (std::size_t i = 0; i < c.columns.size(); ++i) {
    if (c.columns[i].metric == m && c.columns[i].stage.empty()) return i;
  }
  return std::nullopt;
}

std::vector<RowCheck> check_rows(const Comparison& c, std::optional<Bytes> max_peak, std::optional<Growth> growth,
                                 bool first_is_baseline) {
  return check_rows(c, std::vector<std::optional<Bytes>>(c.rows.size(), max_peak), growth, first_is_baseline);
}

std::vector<RowCheck> check_rows(const Comparison& c, const std::vector<std::optional<Bytes>>& max_peaks,
                                 std::optional<Growth> growth, bool first_is_baseline) {
  std::vector<RowCheck> out(c.rows.size());
  const auto col = peak_column(c, c.metric);
  auto value_of = [&](std::size_t row) -> std::optional<Bytes> {
    if (!col || !c.rows[row][*col].value) return std::nullopt;
    return bytes_from_double(c.rows[row][*col].value->median);
  };
  const std::optional<Bytes> base = c.rows.empty() ? std::nullopt : value_of(0);
  for (std::size_t r = 0; r < c.rows.size(); ++r) {
    RowCheck& rc = out[r];
    const bool has_budget = r < max_peaks.size() && max_peaks[r].has_value();
    const Bytes budget = has_budget ? *max_peaks[r] : 0;
    const bool check_peak = has_budget && !(r == 0 && first_is_baseline);
    const bool check_growth = growth && r > 0;
    rc.checked = check_peak || check_growth;
    const auto value = value_of(r);
    rc.known = rc.checked && value && (!check_growth || base);
    if (!rc.known) continue;
    rc.value = *value;
    if (check_peak && *value > budget) rc.over_max_peak = *value - budget;
    if (check_growth) {
      rc.baseline = *base;
      rc.growth = *base ? static_cast<double>(*value) / static_cast<double>(*base) - 1.0 : 0.0;
      const Bytes limit = growth->limit_over(*base);
      if (*value > limit) rc.over_growth = *value - limit;
    }
  }
  return out;
}

}  // namespace qprof::analysis
