// SPDX-License-Identifier: Apache-2.0
#include "sweep_model_output.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <iostream>

#include "commands.hpp"
#include "qprof/analysis/dirs.hpp"
#include "qprof/analysis/metric.hpp"
#include "qprof/analysis/peaks.hpp"
#include "qprof/analysis/timeline.hpp"
#include "qprof/analysis/sweep_grid.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/common/units.hpp"
#include "qprof/fit/saved_result.hpp"
#include "qprof/plot/sweep_chart.hpp"
#include "qprof/report/sweep.hpp"

namespace qprof::cli {
using analysis::budget_bytes;
using analysis::FigureModel;
using analysis::FitLimits;
using analysis::memory_limit;
using analysis::sweep_model;
using analysis::SweepModel;
using analysis::SweepPointRuns;
using analysis::value_in_label;
using trace::Trace;

std::optional<double> as_number(const std::string& text) {
  double v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(v)) return std::nullopt;
  return v;
}

namespace {

// qprof fit's limits for a trace, from the JSON qprof sweep --fit wrote beside it; none where
// there is no such file (a file that is not fit's JSON is said).
FitLimits saved_fit_limits(const Trace& t, const Speaker& say) {
  const Result<std::optional<fit::SavedLimits>> read = fit::read_saved_limits(fit::saved_result_path(t.source));
  if (!read) say.line(terminal_text(read.failure().message) + "; its fit limits left out");
  FitLimits f;
  if (!read || !*read) return f;
  const fit::SavedLimits* saved = &**read;
  if (saved->runs_in) f.runs_in = static_cast<double>(*saved->runs_in);
  if (saved->full_speed) f.full_speed = static_cast<double>(*saved->full_speed);
  return f;
}

}  // namespace

Result<void> add_sweep_model(report::Document& doc, const std::vector<LabelledTrace>& traces,
                             const SweepModelRequest& request, const Speaker& say) {
  std::vector<SweepPointRuns> points;
  for (const LabelledTrace& lt : traces) {
    auto text = value_in_label(lt.label, request.parameter);
    if (!text) text = value_in_label(lt.trace->source, request.parameter);
    if (!text) {
      say.line(terminal_text(lt.label) + ": no " + request.parameter + "=VALUE in its label or file name; left out");
      continue;
    }
    // A failed run is left out before its value is read: a value it failed on (sweep -p n=abc)
    // says nothing of the model of the others.
    if (lt.trace->exit && lt.trace->exit->status != 0) {
      say.line(terminal_text(lt.label) + ": the job exited with status " + std::to_string(lt.trace->exit->status) +
               "; left out of the model");
      continue;
    }
    const auto value = as_number(*text);
    if (!value) {
      return Failure{terminal_text(lt.label) + ": " + request.parameter + "=" + terminal_text(*text) +
                     " is not a number: no model over it"};
    }
    auto same = std::find_if(points.begin(), points.end(), [&](const SweepPointRuns& p) { return p.value == *value; });
    if (same == points.end()) {
      points.push_back({*value, {}, {}});
      same = points.end() - 1;
    }
    same->runs.push_back(lt.trace);
    same->fits.push_back(saved_fit_limits(*lt.trace, say));
  }
  if (points.empty()) {
    return Failure{"no completed run carries " + request.parameter + "=VALUE: no model"};
  }
  if (points.size() < 2) {
    say.line("one value of " + request.parameter + " only: the table, and no fit");
  }
  report::SweepModelOptions options;
  options.at = request.at;
  options.rss = request.rss;
  if (!request.limit.empty()) {
    const auto limit = budget_bytes(request.limit, *points.front().runs.front());
    if (!limit) {
      return Failure{"--limit: " + terminal_text(limit.failure().message)};
    }
    options.limit = *limit;
    options.limit_source = "--limit " + request.limit;
  } else if (const auto in_force = memory_limit(*points.front().runs.front())) {
    options.limit = in_force->bytes;
    options.limit_source = "the " + in_force->source + " limit in force when the first run was recorded";
  }
  const SweepModel model = sweep_model(request.parameter, points);
  report::add_sweep_model(doc, model, options);
  doc.csv_table = doc.tables.size() - 1;  // CSV: the model (JSON holds every table)
  if (request.plot.empty()) return {};
  // The chart of the figure the limit is solved on.
  const FigureModel* figure = report::limit_figure(model, options.rss);
  if (!figure) {
    return Failure{"--plot: no memory figure with two values or more to draw"};
  }
  std::optional<double> solved;
  if (options.limit) {
    if (const auto x = figure->solve(static_cast<double>(*options.limit)); x && *x >= 0) {
      solved = model.integer_values ? std::floor(*x + 1e-9) : *x;
    }
  }
  try {  // what the standard library throws (a thread that cannot start)
    if (Result<void> drawn = plot::plot_sweep(model, *figure, options.limit, solved, {request.plot, {}, "gnuplot"});
        !drawn) {
      // The chart's own failures name --plot already ("--plot draws with gnuplot, and …").
      const std::string& why = drawn.failure().message;
      return Failure{(why.starts_with("--plot") ? "" : "--plot: ") + terminal_text(why)};
    }
  } catch (const std::exception& e) {
    return Failure{"--plot: " + terminal_text(e.what())};
  }
  return {};
}

}  // namespace qprof::cli
