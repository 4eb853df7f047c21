// SPDX-License-Identifier: Apache-2.0
// qprof compare A.dat B.dat …            one row per trace, side by side
// qprof compare --run 'CMD A' --run 'CMD B' [--repeat N]   run each under qprof first
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include "qprof/trace/oom.hpp"
#include "qprof/common/output_file.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/common/text_wrap.hpp"
#include "qprof/common/trace_label.hpp"
#include "commands.hpp"
#include "compare_cli.hpp"
#include "profiled.hpp"
#include "qprof/analysis/dirs.hpp"
#include "qprof/analysis/job.hpp"
#include "qprof/plot/plot.hpp"
#include "qprof/trace/format.hpp"
#include "qprof/trace/completeness.hpp"
#include "qprof/record/session.hpp"
#include "sweep_model_output.hpp"

namespace qprof::cli {
using analysis::Align;
using analysis::available_metrics;
using analysis::budget_bytes;
using analysis::check_rows;
using analysis::clock_skew_note;
using analysis::compare;
using analysis::CompareEntry;
using analysis::Comparison;
using analysis::find_peak;
using analysis::Growth;
using analysis::has_metric;
using analysis::is_one_job;
using analysis::job_trace;
using analysis::Metric;
using analysis::metric_info;
using analysis::metric_names;
using analysis::parse_growth;
using analysis::rank_label;
using analysis::RowCheck;
using analysis::stages_at;
using analysis::where_in_stages;
using record::read_back;
using record::run_profiled;
using record::RunOptions;
using record::RunReport;
using trace::incomplete_notice;
using trace::Stage;
using trace::Trace;

namespace {

// A comparison reads peaks, stage peaks and totals: a trace file is read reduced, in memory flat
// in its length (trace::read_trace_reduced); a pipe, or a trace whose clock went back, whole.
Trace read_for_compare(const std::string& path) {
  if (auto reduced = trace::read_trace_reduced(path, analysis::kTimeSlack)) return std::move(*reduced);
  return trace::read_trace(path);
}

// A job's total adds its ranks' series up on one time axis: those traces are read again, whole.
Result<void> read_whole(std::vector<std::unique_ptr<Trace>>& traces) {
  for (auto& t : traces) {
    if (!t->reduced) continue;
    try {
      *t = trace::read_trace(t->source);
    } catch (const std::exception& e) {
      return Failure{terminal_text(read_failure(e, t->source))};
    }
  }
  return {};
}

struct Verdicts {
  std::vector<report::RowBudget> rows;
  bool over = false;
  bool unknown = false;  // a row without the metric: the budget could not be checked
};

// The budgets' verdicts: a column for the table, and what exceeded and where on stderr; fails on
// --max-peak PCT for a trace that records no limit.
Result<Verdicts> check_budgets(const CompareCli& o, const std::vector<CompareEntry>& entries, const Comparison& c) {
  Verdicts v;
  v.rows.resize(entries.size());
  if (o.max_peak.empty() && o.max_growth.empty()) return v;
  // A size is every row's budget; a percentage is each row's share of the limit its traces
  // recorded (the tightest of its runs).
  std::vector<std::optional<Bytes>> max_peaks(entries.size());
  if (!o.max_peak.empty()) {
    for (std::size_t r = 0; r < entries.size(); ++r) {
      for (const Trace* run : entries[r].runs) {
        const Result<Bytes> b = budget_bytes(o.max_peak, *run);
        if (!b) return b.failure();
        max_peaks[r] = std::min(max_peaks[r].value_or(*b), *b);
      }
    }
  }
  const std::optional<Growth> growth = o.max_growth.empty() ? std::nullopt : parse_growth(o.max_growth);
  const std::vector<RowCheck> checks = check_rows(c, max_peaks, growth, !o.baseline.empty());
  const std::string metric(metric_info(c.metric).name);
  const std::string title = "peak " + std::string(metric_info(c.metric).title);
  for (std::size_t r = 0; r < entries.size(); ++r) {
    const RowCheck& rc = checks[r];
    report::RowBudget& b = v.rows[r];
    if (!rc.checked) continue;
    const std::string& label = entries[r].label;
    if (!rc.known) {
      b.text = "not checked: no " + metric;
      v.unknown = true;
      std::cerr << "qprof compare: budget not checked for " << label << ": it or the first row has no " << metric
                << '\n';
      continue;
    }
    const std::string value =
        human_bytes(rc.value) +
        (entries[r].runs.size() > 1 ? " (median of " + std::to_string(entries[r].runs.size()) + " runs)" : "");
    if (rc.over_max_peak) {
      const Bytes budget = *max_peaks[r];
      const double frac = budget ? static_cast<double>(*rc.over_max_peak) / static_cast<double>(budget) : 0.0;
      const std::string of_limit =
          o.max_peak.find('%') != std::string::npos ? " (" + o.max_peak + " of its limit)" : "";
      b.text = "over --max-peak by " + human_bytes(*rc.over_max_peak) + " (" + percent(frac) + ")";
      std::cerr << "qprof compare: memory budget exceeded: " << label << ": " << title << " " << value
                << " exceeds the budget of " << human_bytes(budget) << of_limit << " by "
                << human_bytes(*rc.over_max_peak) << " (" << percent(frac) << ")" << where_of_row(entries[r], c.metric)
                << '\n';
    }
    if (rc.over_growth) {
      b.text += (b.text.empty() ? "" : "; ") + percent(rc.growth) + " over the baseline";
      std::cerr << "qprof compare: memory budget exceeded: " << label << ": " << title << " " << value << " is "
                << percent(rc.growth) << " against the baseline " << entries[0].label << " ("
                << human_bytes(rc.baseline) << "), more than the " << growth->text() << " allowed, by "
                << human_bytes(*rc.over_growth) << where_of_row(entries[r], c.metric) << '\n';
    }
    b.over = rc.over();
    v.over = v.over || b.over;
    if (!b.over) b.text = "ok";
  }
  return v;
}

// The trace of a --run: prefix-K.dat (prefix-K-R.dat with --repeat), or where a file has that
// name, the first of prefix-K.run2.dat, prefix-K.run3.dat… that none has: an earlier comparison's
// traces are never overwritten. `taken` gets the name passed over, to be said.
std::string trace_name(const CompareCli& o, std::size_t command, int repeat, std::string& taken) {
  std::string stem = o.prefix + "-" + std::to_string(command + 1);
  if (o.repeat > 1) stem += "-" + std::to_string(repeat + 1);
  std::string name = stem + ".dat";
  std::error_code ec;
  taken.clear();
  for (int n = 2; std::filesystem::exists(name, ec) || ec; ++n) {
    if (taken.empty()) taken = name;
    name = stem + ".run" + std::to_string(n) + ".dat";
  }
  return name;
}

Result<int> compare_action(CompareCli& o, const Invocation& invocation) {
  o.files.insert(o.files.end(), invocation.after_dashdash.begin(), invocation.after_dashdash.end());
  if (o.repeat > 1 && o.commands.empty()) return Failure{"--repeat repeats the --run commands; there are none"};
  const std::size_t rows = (o.baseline.empty() ? 0 : 1) + o.files.size() + o.commands.size();
  if (rows == 0) return Failure{"nothing to compare: give trace files, --run commands, or both"};
  if (o.labels.size() > rows) {
    return Failure{std::to_string(o.labels.size()) + " labels for " + std::to_string(rows) + " rows"};
  }
  if (!o.max_growth.empty() && rows < 2) {
    return Failure{"--max-growth needs a baseline (--baseline FILE, or the first of two rows or more)"};
  }
  if (!o.commands.empty()) {
    if (auto checked = check_sampling_options(o.run); !checked) return checked.failure();
  }
  if (!o.pivot.empty() && o.stages) {
    return Failure{"--pivot shows one figure per cell, the peak of --metric; --stages is a table of its own"};
  }

  // Every trace file is read before anything runs: a typo must not cost a long run.
  std::vector<std::unique_ptr<Trace>> traces;
  std::vector<CompareEntry> entries;
  auto read = [&](const std::string& path) -> Result<void> {
    try {
      traces.push_back(std::make_unique<Trace>(read_for_compare(path)));
      if (const std::string cut = incomplete_notice(*traces.back(), "compare"); !cut.empty()) std::cerr << cut << '\n';
    } catch (const std::exception& e) {
      return Failure{terminal_text(read_failure(e, path))};
    }
    entries.push_back({default_label(path), {traces.back().get()}});
    return {};
  };
  if (!o.baseline.empty()) {
    if (auto baseline = read(o.baseline); !baseline) return baseline.failure();
  }
  for (const std::string& f : o.files) {
    if (auto file = read(f); !file) return file.failure();
  }

  int failed = 0;
  for (std::size_t k = 0; k < o.commands.size(); ++k) {
    CompareEntry entry{o.commands[k], {}};
    for (int r = 0; r < o.repeat; ++r) {
      RunOptions run = o.run;
      record_metric(run, o.metric);
      run.command = {"/bin/sh", "-c", o.commands[k]};
      std::string taken;
      try {
        run.output = create_fresh(trace_name(o, k, r, taken));  // never through a file or link already there
      } catch (const OutputError& e) {
        return Failure{terminal_text(e.what())};
      }
      run.quiet = true;
      std::cerr << "qprof compare: run " << k + 1 << "/" << o.commands.size();
      if (o.repeat > 1) std::cerr << ", repeat " << r + 1 << "/" << o.repeat;
      std::cerr << ": " << o.commands[k] << " -> " << run.output;
      if (!taken.empty()) std::cerr << " (" << taken << " exists and is kept)";
      std::cerr << '\n';
      RunReport report;
      int status;
      {
        const StdoutToStderr keep_stdout_for_the_table;
        status = run_profiled(run, &report);
      }
      if (!report.launched) {
        ::unlink(run.output.c_str());  // the empty file made for it
        return status;
      }
      if (status != 0) {
        std::cerr << "qprof compare: '" << o.commands[k] << "' exited with status " << status
                  << "; its trace is kept\n";
        if (failed == 0) failed = status;
      }
      if (!report.trace_error.empty() || !report.trace_readable_back) {
        // Never read back: the row would be built on a trace cut anywhere.
        return Failure{"the trace " + run.output + " is " +
                           (report.trace_error.empty() ? "not a file" : "incomplete (" + report.trace_error + ")") +
                           "; no comparison",
                       status != 0 ? status : kTraceIncomplete};
      }
      try {
        traces.push_back(std::make_unique<Trace>(read_back(report)));
        entry.runs.push_back(traces.back().get());
      } catch (const std::exception& e) {
        return Failure{terminal_text(e.what()), status != 0 ? status : kUsageError};
      }
      const auto stop = [](int sig) { return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT; };
      if (stop(report.signal) || stop(status - 128)) {
        return Failure{"interrupted; no more runs", status};
      }
    }
    entries.push_back(std::move(entry));
  }
  if (!o.sweep.empty()) {
    std::vector<LabelledTrace> traces;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const std::string& label = i < o.labels.size() ? o.labels[i] : entries[i].label;
      for (const Trace* t : entries[i].runs) traces.push_back({label, t});
    }
    report::Document doc;
    const int s = add_sweep_model(doc, traces, {o.sweep, o.at, o.limit, o.plot, o.metric == "rss"}, "qprof compare");
    if (s != 0 && doc.tables.empty()) return failed ? failed : s;
    std::cout << report::render(doc, format_of(o.format), render_options(o));
    return failed ? failed : s;
  }
  // One job's ranks: a row per rank named by its rank, and the job's total as the last row.
  std::unique_ptr<Trace> job;
  std::string highest_note;
  if (o.commands.empty() && o.baseline.empty()) {
    std::vector<const Trace*> ranks;
    for (const CompareEntry& e : entries) ranks.push_back(e.runs.front());
    if (is_one_job(ranks)) {
      const Align align = o.align == "start" ? Align::start : Align::wall;
      for (CompareEntry& e : entries) e.label = rank_label(*e.runs.front());
      if (auto whole = read_whole(traces); !whole) return whole.failure();
      job = std::make_unique<Trace>(job_trace(ranks, align));
      entries.push_back({"job (" + std::to_string(ranks.size()) + " ranks)", {job.get()}, true});
      const Metric m = metric_for(o.metric, ranks).metric;
      std::optional<std::pair<std::size_t, Bytes>> top;
      for (std::size_t i = 0; i < ranks.size(); ++i) {
        const auto p = find_peak(*ranks[i], m);
        if (p && (!top || p->bytes > top->second)) top = std::make_pair(i, p->bytes);
      }
      if (top)
        highest_note = "highest peak of a rank: " + rank_label(*ranks[top->first]) + ", " + human_bytes(top->second);
      if (const auto skew = clock_skew_note(ranks)) std::cerr << "qprof compare: warning: " << *skew << '\n';
    }
  }
  for (std::size_t i = 0; i < o.labels.size(); ++i) entries[i].label = o.labels[i];

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
  // A failed command's status wins over qprof's own 2.
  const int failure_status = failed ? failed : kUsageError;
  if (!any) {
    return Failure{"--metric: no trace has " + named +
                       " (the first has: " + metric_names(available_metrics(*entries.front().runs.front())) + ")",
                   failure_status};
  }
  if (o.stages && !metric_info(metric).windowed) {
    return Failure{"--stages: " + named + " has no samples over time, so no peak inside a stage", failure_status};
  }

  const Comparison c = compare(entries, metric, o.stages);
  Result<Verdicts> checked = check_budgets(o, entries, c);
  if (!checked) return Failure{checked.failure().message, failure_status};
  const Verdicts& v = *checked;
  report::Document doc;
  if (o.pivot.empty()) {
    doc = report::comparison_document(entries, c, v.rows);
  } else {
    try {
      doc = report::pivot_document(entries, c, {o.pivot[0], o.pivot[1]});
    } catch (const std::invalid_argument& e) {
      return Failure{"--pivot: " + terminal_text(e.what()), failure_status};
    }
  }
  if (!highest_note.empty() && !doc.tables.empty()) doc.tables.front().notes.push_back(highest_note);
  // A run whose process the OOM killer took has figures cut short: said under the table.
  for (const CompareEntry& e : entries) {
    for (const Trace* t : e.runs) {
      for (const trace::OomKill& k : t->oom_kills) {
        if (!doc.tables.empty()) {
          doc.tables.front().notes.push_back("OOM kill in " + e.label + ": " + trace::describe_oom_kill(k, t->t0()));
        }
      }
    }
  }
  if (!chosen.fallback.empty() && !doc.tables.empty()) doc.tables.front().notes.push_back(chosen.fallback);
  std::cout << report::render(doc, format_of(o.format), render_options(o));
  std::cout.flush();
  // The job row has no file of its own to draw: the chart shows the ranks.
  if (!o.plot.empty()) {
    const auto drawn = draw(o, std::vector<CompareEntry>(entries.begin(), entries.end() - (job ? 1 : 0)));
    if (!drawn) return Failure{drawn.failure().message, failure_status};
  }
  if (failed) return failed;
  if (v.unknown) return kUsageError;
  return v.over ? kBudgetExceeded : 0;
}

}  // namespace

Command add_compare(CLI::App& app, const Invocation& invocation) {
  auto opts = std::make_shared<CompareCli>();
  CLI::App* cmp = app.add_subcommand("compare", "Compare runs side by side: duration, peaks, disk, stages");
  cmp->footer(
      "Usage: qprof compare [OPTIONS] [FILE...] [--run 'CMD'...]\n"
      "Rows: --baseline, then the FILEs, then the --run commands (each run with sh -c under qprof, its\n"
      "trace kept as PREFIX-K.dat, or PREFIX-K-R.dat with --repeat). Columns: the footprint, Σ RSS peak,\n"
      "duration, then the rest; a text table fits the terminal (80 columns into a pipe) and names the columns it left "
      "out\n"
      "(--wide, csv, json and md keep them all). The lowest value of each column is marked where the\n"
      "values differ as printed; ratios are to the first row; a job's total row gets neither. The\n"
      "commands' stdout goes to stderr.\n"
      "--pivot model,method with --label 64MiB/minmax,64MiB/percentile,... folds the rows into a grid:\n"
      "rows 64MiB, ..., columns minmax, percentile, ..., cells the peak of --metric.\n"
      "--sweep workers on traces named or labelled workers=VALUE (qprof sweep's): each figure (footprint,\n"
      "Σ RSS peak, duration) fitted against workers, linear or a power law where its R² is higher by\n"
      "over 0.01; --at 16 predicts, --limit 16G solves for the largest workers that fits (default: the\n"
      "limit the first trace recorded). Runs that exited non-zero are left out of the model. With\n"
      "--sweep, --plot draws the footprint (else Σ RSS peak) against NAME: the runs, the fit, the\n"
      "limit and the solved value.\n"
      "Budgets, on the --metric peak (the median of repeated runs): --max-peak on every row but\n"
      "--baseline; --max-growth on every row against the first. Exit status: 3 when one is exceeded,\n"
      "2 for usage errors, unreadable traces, or a budget that could not be checked; a failed command's\n"
      "own status wins.");
  cmp->add_option("files", opts->files, "Trace files (.dat of qprof or mprof)");
  cmp->add_option("--label", opts->labels,
                  "Row name, one per use in row order, or a comma list (default: the file name, or the command)")
      ->allow_extra_args(false)
      ->delimiter(',');
  cmp->add_option("--run", opts->commands,
                  "Run this shell command under qprof first and compare its trace (repeatable)");
  cmp->add_option("--repeat", opts->repeat, "Run each --run command N times: the median, and min-max")
      ->check(CLI::Range(1, 1000));
  cmp->add_flag("--stages", opts->stages, "Also the peak inside each stage");
  cmp->add_option("--format", opts->format, "text (default), md, csv or json")->check(format_check());
  cmp->add_option("--unit", opts->unit,
                  "Unit of sizes: B, KiB, MiB, GiB, KB, MB, GB (default: MiB or GiB for text, bytes for csv/json)")
      ->check(unit_check());
  cmp->add_option("--metric", opts->metric,
                  "Metric of --stages, of the ratio column, of the marks, of --plot and of budgets (default: the "
                  "footprint, shared pages once, where every trace recorded it, else Σ RSS; rss: Σ RSS as mprof "
                  "counts it)")
      ->check(metric_check());
  cmp->add_option("--baseline", opts->baseline,
                  "Reference trace: the first row, that ratios and --max-growth measure from");
  cmp->add_option("--max-growth", opts->max_growth,
                  "Budget: a peak at most this much above the first row's (10%, 200MiB; a bare number is MiB)")
      ->check(growth_check());
  cmp->add_option("--max-peak", opts->max_peak,
                  "Budget: a peak at most SIZE (4GiB, 512MB; a bare number is MiB), or PCT (90%) of the memory limit "
                  "each row's traces "
                  "recorded")
      ->check(budget_check());
  cmp->add_option("--plot", opts->plot,
                  "Also draw the runs overlaid (aligned at t=0) into OUT: .png, .svg, .pdf, or - (text)")
      ->check([](const std::string& out) -> std::string {
        return plot::format_for(out) ? "" : "'" + out + "' is not .png, .svg, .pdf or -";
      });
  cmp->add_option("--pivot", opts->pivot,
                  "Fold the rows into a grid named ROWS,COLUMNS (e.g. model,method): each row's label is "
                  "ROW/COLUMN, each cell the peak of --metric, and a last column names the lowest")
      ->expected(2)
      ->allow_extra_args(false)
      ->delimiter(',');
  cmp->add_option("--sweep", opts->sweep,
                  "Read the rows as a sweep over NAME (labels or file names carry NAME=VALUE, as qprof sweep names "
                  "them): each figure fitted against NAME, linear or power law")
      ->excludes("--pivot");
  cmp->add_option("--at", opts->at, "With --sweep: predict each figure at this value of NAME");
  cmp->add_option("--limit", opts->limit,
                  "With --sweep: the largest NAME whose predicted footprint (or Σ RSS peak) fits SIZE or PCT of the "
                  "limit in force (default: the limit the first trace recorded)")
      ->check(budget_check());
  cmp->add_flag("--wide", opts->wide,
                "Text: every column, however wide (by default a table fits the terminal and names what it left out)");
  cmp->add_flag("--plot-facet", opts->plot_facet, "With --plot: one small panel per run instead of one overlay");
  cmp->add_option("--align", opts->align,
                  "Traces of one job's ranks get a row each and the job's total: wall (default) or start lays them "
                  "on one time axis")
      ->check(CLI::IsMember({"wall", "start"}));
  cmp->add_option(
      "-o,--output-prefix", opts->prefix,
      "Trace names of --run (default qprof_compare: qprof_compare-1.dat, …; where one exists, the next free "
      "qprof_compare-1.run2.dat, …: never overwritten)");
  add_sampling_options(*cmp, opts->run);

  return {cmp, [opts, &invocation] { return compare_action(*opts, invocation); }};
}

}  // namespace qprof::cli
