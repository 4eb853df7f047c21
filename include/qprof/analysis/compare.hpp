// SPDX-License-Identifier: Apache-2.0
// Several runs side by side: a column per figure, a row per trace (or the median of repeated
// runs), and budgets on the rows (compare.cpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "qprof/analysis/budgets.hpp"
#include "qprof/analysis/metric.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof::analysis {

// One row to compare: a trace, or several runs of the same command (their median is the row's
// value, their min and max its spread).
struct CompareEntry {
  std::string label;
  std::vector<const trace::Trace*> runs;
  // The sum of other rows (a job's ranks): neither the lowest nor a ratio, it is no candidate.
  bool summed = false;
};

struct Spread {
  double median = 0;
  double min = 0;
  double max = 0;
};
// nullopt for no values. The median of an even count is the mean of the middle two.
std::optional<Spread> spread_of(std::vector<double> values);

struct CompareValue {
  std::optional<Spread> value;  // absent: the trace does not have it
  bool lowest = false;          // the lowest of its column, where two rows or more differ
  std::optional<double> ratio;  // value / the first row's value (none on a summed row)
};

struct CompareColumn {
  enum class Kind { seconds, bytes };
  std::string key;    // "duration", "peak_rss", "stage_peak" (+ stage) …
  std::string title;  // "duration", "peak RSS", "peak in Calibration"
  Kind kind = Kind::bytes;
  std::optional<Metric> metric;  // the metric of a peak column
  std::string stage;             // the stage of a per-stage peak column
};

struct Comparison {
  Metric metric = Metric::rss;  // the metric of the per-stage peaks (and of budgets)
  std::vector<CompareColumn> columns;
  std::vector<std::vector<CompareValue>> rows;  // one per entry, one value per column
  std::size_t stages_left_out = 0;              // stage names past kMaxStageColumns, without a column
};
// The most stage names that get a column of their own in a comparison.
inline constexpr std::size_t kMaxStageColumns = 64;

// Columns: duration; the peak of every metric one trace or more has (rss always); total disk read
// and write where a trace has IO; with `stages`, the peak of `metric` inside each stage name.
Comparison compare(const std::vector<CompareEntry>& entries, Metric metric, bool stages);
// The index of the column holding the peak of `m`, if there is one.
std::optional<std::size_t> peak_column(const Comparison& c, Metric m);

// Budgets on the rows of a comparison, on the peak of `c.metric` (a row's median): `max_peak` on
// every row but the first when it is an explicit baseline, `growth` on every row against the first.
struct RowCheck {
  bool checked = false;                // a budget applies to this row
  bool known = false;                  // the row (and the first, for a growth) has the metric
  Bytes value = 0;                     // the row's peak
  std::optional<Bytes> over_max_peak;  // by how much it exceeds max_peak
  std::optional<Bytes> over_growth;    // by how much it exceeds the growth allowed over the first row
  Bytes baseline = 0;                  // the first row's peak (with a growth)
  double growth = 0;                   // value / baseline − 1
  bool over() const { return over_max_peak || over_growth; }
};
std::vector<RowCheck> check_rows(const Comparison& c, std::optional<Bytes> max_peak, std::optional<Growth> growth,
                                 bool first_is_baseline);
// The same with a budget per row (--max-peak 90%: each row's share of its own traces' limit).
std::vector<RowCheck> check_rows(const Comparison& c, const std::vector<std::optional<Bytes>>& max_peaks,
                                 std::optional<Growth> growth, bool first_is_baseline);

}  // namespace qprof::analysis
