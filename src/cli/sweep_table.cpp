// SPDX-License-Identifier: Apache-2.0
#include "sweep_table.hpp"

#include <algorithm>
#include <cmath>
#include <charconv>
#include <optional>

#include "qprof/analysis/default_metric.hpp"
#include "qprof/analysis/metric.hpp"
#include "qprof/analysis/peaks.hpp"
#include "qprof/analysis/timeline.hpp"
#include "stderr_speaker.hpp"

namespace qprof::cli {
using analysis::find_peak;
using analysis::has_metric;
using analysis::Metric;
using analysis::point_name;
using analysis::SweepParameter;
using analysis::trace_duration;
using runs::SweepRun;

namespace {

// A run that failed is said once, in the table's note, and left out of the model.
bool enters_model(const SweepRun& r) { return r.trace && r.status == 0; }

// A model needs numbers: "8", "0.5", "1e3"; not "fp16". Only the runs that enter it count: a
// value that failed (n=abc) is left out of the model, not a reason for none.
bool all_numbers(const std::vector<SweepRun>& runs) {
  return std::all_of(runs.begin(), runs.end(), [](const SweepRun& r) {
    if (!enters_model(r) || r.point.empty()) return true;
    const std::string& v = r.point.front().second;
    double d = 0;
    const auto parsed = std::from_chars(v.data(), v.data() + v.size(), d);
    return parsed.ec == std::errc() && parsed.ptr == v.data() + v.size();
  });
}

}  // namespace

report::Table runs_table(const std::vector<SweepParameter>& parameters, const std::vector<SweepRun>& runs) {
  report::Table t;
  t.name = "sweep_runs";
  t.title = "Runs";
  using report::Cell;
  using report::Column;
  using report::Kind;
  // A parameter of whole numbers is a number in CSV and JSON, as the model's table gives it
  // (sweep_points, integer_values): "n": 20 in both, not "20" in one. Read as the model reads it.
  const auto whole = [](const std::string& v) -> std::optional<double> {
    const auto n = as_number(v);
    return n && *n == std::floor(*n) ? n : std::nullopt;
  };
  std::vector<bool> whole_numbers;
  for (const SweepParameter& p : parameters) {
    whole_numbers.push_back(
        std::all_of(p.values.begin(), p.values.end(), [&](const std::string& v) { return whole(v).has_value(); }));
    t.columns.push_back(Column::of(p.name, p.name, whole_numbers.back() ? Kind::count : Kind::text));
  }
  t.columns.push_back(Column::of("repeat", "repeat", Kind::count));
  t.columns.push_back(Column::of("exit_status", "exit", Kind::count));
  t.columns.push_back(Column::of("duration", "duration", Kind::seconds));
  t.columns.push_back(Column::of("footprint", "footprint", Kind::bytes));
  t.columns.push_back(Column::of("peak_rss", "\u03a3 RSS peak", Kind::bytes));
  const bool fitted = std::any_of(runs.begin(), runs.end(), [](const SweepRun& r) { return r.fit.has_value(); });
  if (fitted) {
    // Short titles, named in a note: "fit: full speed MiB" alone took a fifth of 80 columns.
    t.columns.push_back(Column::of("fit_runs_in", "runs in", Kind::bytes));
    t.columns.push_back(Column::of("fit_full_speed", "full speed", Kind::bytes));
    t.notes.push_back("runs in, full speed: the limits qprof fit found at each point (its JSON beside the trace)");
  }
  t.columns.push_back(Column::of("trace", "trace", Kind::text));
  const bool any_footprint = std::any_of(
      runs.begin(), runs.end(), [](const SweepRun& r) { return r.trace && has_metric(*r.trace, Metric::footprint); });
  t.columns[parameters.size() + 3].human = any_footprint;
  // Narrowed to the terminal, the traces' names stay whole: left out first the repeat column
  // where every point ran once, then Σ RSS where the footprint is beside it (the sweep's own
  // table has it per point), then fit's limits (the model has them), full speed first.
  const int fit_columns = fitted ? 1 : 0;
  if (std::all_of(runs.begin(), runs.end(), [](const SweepRun& r) { return r.repeat <= 1; }))
    t.columns[parameters.size()].narrow = 2 + fit_columns;
  if (any_footprint) t.columns[parameters.size() + 4].narrow = 1 + fit_columns;
  if (fitted) t.columns[parameters.size() + 5].narrow = t.columns[parameters.size() + 6].narrow = 1;
  if (!any_footprint && std::any_of(runs.begin(), runs.end(), [](const SweepRun& r) { return r.trace != nullptr; })) {
    t.notes.push_back(analysis::choose_metric(std::nullopt, false, "these traces").fallback);
  }
  for (const SweepRun& r : runs) {
    std::vector<Cell> row;
    for (std::size_t i = 0; i < r.point.size(); ++i) {
      const std::string& v = r.point[i].second;
      const auto n = i < whole_numbers.size() && whole_numbers[i] ? whole(v) : std::nullopt;
      row.push_back(n ? Cell::number(*n) : Cell::string(v));
    }
    row.push_back(Cell::number(r.repeat));
    row.push_back(Cell::number(r.status));
    if (r.trace) {
      row.push_back(Cell::number(trace_duration(*r.trace)));
      const auto footprint = find_peak(*r.trace, Metric::footprint);
      const auto rss = find_peak(*r.trace, Metric::rss);
      row.push_back(footprint ? Cell::bytes(footprint->bytes) : Cell{});
      row.push_back(rss ? Cell::bytes(rss->bytes) : Cell{});
    } else {
      row.insert(row.end(), 3, Cell{});
    }
    if (fitted) {
      const auto size = [](const std::optional<Bytes>& b) { return b ? Cell::bytes(*b) : Cell{}; };
      row.push_back(r.fit ? size(r.fit->runs_in) : Cell{});
      row.push_back(r.fit ? size(r.fit->full_speed) : Cell{});
    }
    Cell trace = Cell::string(r.path);
    if (!r.problem.empty()) trace.note = r.problem;
    row.push_back(trace);
    t.rows.push_back(std::move(row));
  }
  return t;
}

SweepDocument sweep_document(const std::vector<SweepParameter>& parameters, const std::vector<SweepRun>& runs,
                             const SweepModelRequest& model) {
  SweepDocument out;
  report::Document& doc = out.doc;
  doc.tables.push_back(runs_table(parameters, runs));
  std::size_t failed = 0;
  for (const SweepRun& r : runs) failed += r.status != 0 ? 1 : 0;
  if (failed > 0) doc.tables.front().notes.push_back(std::to_string(failed) + " run(s) failed: left out of the model");
  if (parameters.size() == 1 && !all_numbers(runs)) {
    doc.tables.front().notes.push_back("the values of " + parameters.front().name + " are not all numbers: no model");
  } else if (parameters.size() == 1) {
    std::vector<LabelledTrace> traces;
    for (const SweepRun& r : runs) {
      if (enters_model(r)) traces.push_back({point_name(r.point), r.trace.get()});
    }
    if (!traces.empty()) out.model = add_sweep_model(doc, traces, model, stderr_speaker("sweep"));
  } else {
    doc.tables.front().notes.push_back(
        "a grid has no model: qprof compare --sweep NAME on the traces of one line of it");
  }
  return out;
}

}  // namespace qprof::cli
