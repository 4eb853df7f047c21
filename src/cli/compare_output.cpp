// SPDX-License-Identifier: Apache-2.0
// The parts of qprof compare's output beside its run loop: the render options, the document and
// its notes, one job's total row, the --sweep model, the chart, the budgets' wording.
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "compare_cli.hpp"
#include "profiled.hpp"
#include "commands.hpp"
#include "stderr_speaker.hpp"
#include "qprof/analysis/budgets.hpp"
#include "qprof/analysis/catalog.hpp"
#include "qprof/analysis/peaks.hpp"
#include "qprof/analysis/timeline.hpp"
#include "qprof/trace/format.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/common/text_wrap.hpp"
#include "qprof/analysis/job.hpp"
#include "qprof/plot/plot.hpp"
#include "qprof/trace/oom.hpp"
#include "sweep_model_output.hpp"

namespace qprof::cli {
using analysis::CompareEntry;
using analysis::find_peak;
using analysis::has_metric;
using analysis::Metric;
using analysis::metric_info;
using analysis::metric_names;
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

// --sweep NAME: the rows as a model of each figure against NAME.
Result<int> print_sweep_model(const CompareCli& o, const std::vector<CompareEntry>& entries, int failed) {
  std::vector<LabelledTrace> traces;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::string& label = i < o.labels.size() ? o.labels[i] : entries[i].label;
    for (const Trace* t : entries[i].runs) traces.push_back({label, t});
  }
  report::Document doc;
  const Result<void> model =
      add_sweep_model(doc, traces, {o.sweep, o.at, o.limit, o.plot, o.metric == "rss"}, stderr_speaker("compare"));
  if (!doc.tables.empty()) std::cout << report::render(doc, format_of(o.format), render_options(o));
  if (!model) return Failure{model.failure().message, failed ? failed : kUsageError};
  return failed;
}

// The job's total, summed where its ranks stream into a trace of exact numbers read reduced
// (flat in memory, the figures of job_trace's), else job_trace from the ranks read whole.
Result<std::unique_ptr<Trace>> job_total(const std::vector<const Trace*>& ranks, analysis::Align align,
                                         std::unique_ptr<JobTraceFile>& file) {
  if (!analysis::job_streams(ranks)) return std::make_unique<Trace>(analysis::job_trace(ranks, align));
  file = std::make_unique<JobTraceFile>();
  if (auto written = write_job_file(ranks, align, true, "the job's total: ", *file); !written) {
    return written.failure();
  }
  try {
    auto job = trace::read_trace_reduced(file->path, analysis::kTimeSlack);
    if (!job) return Failure{"the job's total: its trace could not be read reduced"};
    // job_trace's stages are its own, without markers; its name is "job", its file the one above.
    job->markers.clear();
    job->source = "job";
    return std::make_unique<Trace>(std::move(*job));
  } catch (const std::exception& e) {
    return Failure{"the job's total: " + terminal_text(e.what())};
  }
}

Result<JobRow> add_job_row(const CompareCli& o, std::vector<CompareEntry>& entries) {
  JobRow row;
  std::vector<const Trace*> ranks;
  for (const CompareEntry& e : entries) ranks.push_back(e.runs.front());
  if (!analysis::is_one_job(ranks)) return row;
  if (const auto twice = analysis::repeated_rank(ranks)) {
    stderr_speaker("compare").line("no job row: " + *twice);
    return row;
  }
  const analysis::Align align = o.align == "start" ? analysis::Align::start : analysis::Align::wall;
  for (CompareEntry& e : entries) e.label = analysis::rank_label(*e.runs.front());
  auto total = job_total(ranks, align, row.file);
  if (!total) return total.failure();
  row.trace = std::move(*total);
  entries.push_back({"job (" + std::to_string(ranks.size()) + " ranks)", {row.trace.get()}, true});
  const Metric m = metric_for(o.metric, ranks).metric;
  std::optional<std::pair<std::size_t, Bytes>> top;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    const auto p = find_peak(*ranks[i], m);
    if (p && (!top || p->bytes > top->second)) top = std::make_pair(i, p->bytes);
  }
  if (top) {
    row.highest_note =
        "highest peak of a rank: " + analysis::rank_label(*ranks[top->first]) + ", " + human_bytes(top->second);
  }
  if (const auto skew = analysis::clock_skew_note(ranks)) stderr_speaker("compare").line("warning: " + *skew);
  if (const auto kinds = analysis::mixed_footprint_note(ranks); kinds && m == Metric::footprint) {
    stderr_speaker("compare").line("note: " + *kinds);
  }
  return row;
}

namespace {

// The comparison's table, or its --pivot grid.
Result<report::Document> comparison_document(const CompareCli& o, const std::vector<CompareEntry>& entries,
                                             const analysis::Comparison& c,
                                             const std::vector<report::RowBudget>& budgets) {
  if (o.pivot.empty()) return report::comparison_document(entries, c, budgets);
  Result<report::Document> pivoted = report::pivot_document(entries, c, {o.pivot[0], o.pivot[1]});
  if (!pivoted) return Failure{"--pivot: " + terminal_text(pivoted.failure().message)};
  return pivoted;
}

// Under the first table: the highest rank, OOM kills, the metric's fallback.
void add_notes(report::Document& doc, const std::vector<CompareEntry>& entries, const std::string& highest_note,
               const std::string& fallback) {
  if (doc.tables.empty()) return;
  std::vector<std::string>& notes = doc.tables.front().notes;
  if (!highest_note.empty()) notes.push_back(highest_note);
  // A run whose process the OOM killer took has figures cut short: said under the table.
  for (const CompareEntry& e : entries) {
    for (const Trace* t : e.runs) {
      for (const trace::OomKill& k : t->oom_kills) {
        notes.push_back("OOM kill in " + e.label + ": " + trace::describe_oom_kill(k, t->t0()));
      }
    }
  }
  if (!fallback.empty()) notes.push_back(fallback);
}

}  // namespace

Result<int> print_comparison(const CompareCli& o, const std::vector<CompareEntry>& entries,
                             const std::string& highest_note, bool job_row, int failure_status) {
  // The default metric is the footprint where every row's traces recorded it, else Σ RSS, said once.
  std::vector<const Trace*> all_runs;
  for (const CompareEntry& e : entries) {
    if (!e.summed) all_runs.insert(all_runs.end(), e.runs.begin(), e.runs.end());
  }
  const analysis::MetricChoice chosen = metric_for(o.metric, all_runs);
  const Metric metric = chosen.metric;
  const std::string named = o.metric.empty() ? std::string(metric_info(metric).name) : o.metric;
  const bool any = std::any_of(entries.begin(), entries.end(), [&](const CompareEntry& e) {
    return std::any_of(e.runs.begin(), e.runs.end(), [&](const Trace* t) { return has_metric(*t, metric); });
  });
  if (!any) {
    return Failure{"--metric: no trace has " + named + " (the first has: " +
                       metric_names(analysis::available_metrics(*entries.front().runs.front())) + ")",
                   failure_status};
  }
  if (o.stages && !metric_info(metric).windowed) {
    return Failure{"--stages: " + named + " has no samples over time, so no peak inside a stage", failure_status};
  }
  const analysis::Comparison c = analysis::compare(entries, metric, o.stages);
  Result<Verdicts> checked = check_budgets(o, entries, c);
  if (!checked) return Failure{checked.failure().message, failure_status};
  Result<report::Document> doc = comparison_document(o, entries, c, checked->rows);
  if (!doc) return Failure{doc.failure().message, failure_status};
  add_notes(*doc, entries, highest_note, chosen.fallback);
  std::cout << report::render(*doc, format_of(o.format), render_options(o));
  std::cout.flush();
  // The job row has no file of its own to draw: the chart shows the ranks.
  if (!o.plot.empty()) {
    const auto drawn = draw(o, std::vector<CompareEntry>(entries.begin(), entries.end() - (job_row ? 1 : 0)));
    if (!drawn) return Failure{drawn.failure().message, failure_status};
  }
  if (checked->unknown) return kUsageError;
  return checked->over ? kBudgetExceeded : 0;
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
  options.warn = warn_on_stderr;
  options.output = o.plot;
  options.facet = o.plot_facet;
  options.unit = unit_of(o.unit);
  options.metric = o.metric;  // empty: the chart's own default, the same rule as the table's
  try {                       // what the standard library throws (a thread that cannot start)
    if (Result<void> drawn = plot::plot(inputs, options); !drawn) {
      return Failure{"--plot: " + terminal_text(drawn.failure().message)};
    }
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
