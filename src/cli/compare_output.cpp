// SPDX-License-Identifier: Apache-2.0
// The parts of qprof compare's output beside its table: the render options, the chart, the
// budgets' wording.
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "compare_cli.hpp"
#include "profiled.hpp"
#include "qprof/analysis/budgets.hpp"
#include "qprof/analysis/peaks.hpp"
#include "qprof/analysis/timeline.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/common/text_wrap.hpp"
#include "qprof/plot/plot.hpp"

namespace qprof::cli {
using analysis::CompareEntry;
using analysis::find_peak;
using analysis::Metric;
using analysis::stages_at;
using analysis::where_in_stages;
using trace::Stage;
using trace::Trace;

// Text fits the terminal (80 columns into a pipe): the columns that matter most, the rest named
// under the table. The machine formats and Markdown (a page, not a terminal) keep every column.
report::RenderOptions render_options(const CompareCli& o) {
  report::RenderOptions r{unit_of(o.unit)};
  if (!o.wide) {
    r.text_width = output_columns(STDOUT_FILENO);
    // --sweep's CSV is its model alone: the runs' table is whole in JSON and Markdown.
    r.wider = o.sweep.empty() ? "--wide shows them, as do --format csv, json and md"
                              : "--wide shows them, as do --format json and md";
  }
  return r;
}

// The chart of the compared runs, through the plot module: one line per run, aligned at t=0.
Result<void> draw(const CompareCli& o, const std::vector<CompareEntry>& entries) {
  std::vector<plot::Input> inputs;
  for (const CompareEntry& e : entries) {
    for (std::size_t r = 0; r < e.runs.size(); ++r) {
      inputs.push_back({e.runs[r]->source, e.runs.size() > 1 ? e.label + " #" + std::to_string(r + 1) : e.label});
    }
  }
  plot::PlotOptions options;
  options.output = o.plot;
  options.facet = o.plot_facet;
  options.unit = unit_of(o.unit);
  options.metric = o.metric;  // empty: the chart's own default, the same rule as the table's
  try {
    plot::plot(inputs, options);
  } catch (const std::exception& e) {
    return Failure{"--plot: " + terminal_text(e.what())};
  }
  return {};
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", fraction * 100.0);
  return buf;
}

// Where the peak of each run of a row was: "in stage 'Calibration'", several joined.
std::string where_of_row(const CompareEntry& e, Metric m) {
  std::vector<std::string> places;
  for (const Trace* t : e.runs) {
    const auto p = find_peak(*t, m);
    if (!p || !p->t) continue;
    std::vector<std::string> names;
    for (const Stage* s : stages_at(*t, *p->t)) names.push_back(s->name);
    const std::string w = where_in_stages(names, true);
    if (std::find(places.begin(), places.end(), w) == places.end()) places.push_back(w);
  }
  std::string out;
  for (const std::string& p : places) out += (out.empty() ? ", " : "; ") + p;
  return out;
}

}  // namespace qprof::cli
