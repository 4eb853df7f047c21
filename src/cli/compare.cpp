// SPDX-License-Identifier: Apache-2.0
// qprof compare A.dat B.dat …            one row per trace, side by side
// qprof compare --run 'CMD A' --run 'CMD B' [--repeat N]   run each under qprof first (runs/command_runs)
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "label_count.hpp"
#include "compare_cli.hpp"
#include "profiled.hpp"
#include "qprof/analysis/job.hpp"
#include "qprof/analysis/timeline.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/common/trace_label.hpp"
#include "qprof/plot/gnuplot.hpp"
#include "qprof/plot/plot.hpp"
#include "qprof/plot/sweep_chart.hpp"
#include "qprof/runs/command_runs.hpp"
#include "stderr_speaker.hpp"
#include "qprof/trace/completeness.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::cli {
using analysis::CompareEntry;
using trace::Trace;

namespace {

// A comparison reads peaks, stage peaks and totals: a trace file is read reduced, in memory flat
// in its length (trace::read_trace_reduced); a pipe, or a trace whose clock went back, whole.
Trace read_for_compare(const std::string& path) {
  if (auto reduced = trace::read_trace_reduced(path, analysis::kTimeSlack)) return std::move(*reduced);
  return trace::read_trace(path);
}

// A job's total adds its ranks' series up on one time axis: as their files stream where every
// rank was read reduced and none has GPU devices (analysis::job_streams), else from those traces
// read again, whole.
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

// The checks that need more than CLI11, before anything is read or run.
Result<void> check_request(const CompareCli& o) {
  if (o.repeat > 1 && o.commands.empty()) return Failure{"--repeat repeats the --run commands; there are none"};
  const std::size_t rows = (o.baseline.empty() ? 0 : 1) + o.files.size() + o.commands.size();
  if (rows == 0) return Failure{"nothing to compare: give trace files, --run commands, or both"};
  if (const auto labels = too_many_labels(o.labels.size(), rows, "row")) return Failure{*labels};
  if (!o.max_growth.empty() && rows < 2) {
    return Failure{"--max-growth needs a baseline (--baseline FILE, or the first of two rows or more)"};
  }
  if (!o.commands.empty()) {
    if (auto checked = check_sampling_options(o.run); !checked) return checked.failure();
  }
  // `compare --sweep DIR/*.dat` took the first file for NAME: say so rather than read every trace
  // for a parameter named like a file. A NAME (sweep -p's) has no '/' nor '=' and is not a trace.
  if (!o.sweep.empty() && (o.sweep.find_first_of("/=") != std::string::npos || o.sweep.ends_with(".dat"))) {
    return Failure{"--sweep takes the parameter's NAME before the traces (--sweep workers DIR/*.dat); got " +
                   terminal_text(o.sweep) + ", a file name"};
  }
  // A sweep's chart is a picture: said before any trace is read or command run.
  if (!o.sweep.empty() && !o.plot.empty() && !plot::sweep_chart_output(o.plot)) {
    return Failure{"--plot " + terminal_text(o.plot) + ": " + std::string(plot::kSweepChartFiles) + " (with --sweep)"};
  }
  // The chart's program too, before a run or the table: the table and no chart, or a command's
  // runs and no chart, would be half the answer asked for.
  if (!o.plot.empty()) {
    if (const auto gnuplot = plot::find_gnuplot("gnuplot", "--plot"); !gnuplot) return gnuplot.failure();
  }
  if (!o.pivot.empty() && o.stages) {
    return Failure{"--pivot shows one figure per cell, the peak of --metric; --stages is a table of its own"};
  }
  return {};
}

// The rows and the traces they point into.
struct Rows {
  std::vector<std::unique_ptr<Trace>> files;
  runs::CommandRuns ran;
  std::unique_ptr<Trace> job;  // one job's ranks: their sum, the last row
  std::unique_ptr<JobTraceFile> job_file;
  std::vector<CompareEntry> entries;
  std::string highest_note;
};

// Every trace file is read before anything runs: a typo must not cost a long run.
Result<void> read_files(const CompareCli& o, Rows& rows) {
  auto read = [&](const std::string& path) -> Result<void> {
    try {
      rows.files.push_back(std::make_unique<Trace>(read_for_compare(path)));
      for (const std::string& n : trace::reading_notices(*rows.files.back())) stderr_speaker("compare").line(n);
    } catch (const std::exception& e) {
      return Failure{terminal_text(read_failure(e, path))};
    }
    rows.entries.push_back({default_label(path), {rows.files.back().get()}});
    return {};
  };
  if (!o.baseline.empty()) {
    if (auto baseline = read(o.baseline); !baseline) return baseline.failure();
  }
  for (const std::string& f : o.files) {
    if (auto file = read(f); !file) return file.failure();
  }
  return {};
}

// The --run commands, a row each. An int where the run said why it stopped.
Result<int> run_commands(const CompareCli& o, Rows& rows) {
  runs::CommandRunsRequest request{o.run, o.commands, o.repeat, o.prefix, stderr_speaker()};
  record_metric(request.run, o.metric);
  Result<runs::CommandRuns> ran =
      runs::run_commands(request, [say = stderr_speaker("compare")](const std::string& line) { say.line(line); });
  if (!ran) {
    if (ran.failure().message.empty()) return ran.failure().status;  // not started: the session said why
    return ran.failure();
  }
  rows.ran = std::move(*ran);
  for (const runs::CommandRuns::Command& command : rows.ran.commands) {
    CompareEntry entry{command.command, {}};
    for (const auto& trace : command.runs) entry.runs.push_back(trace.get());
    rows.entries.push_back(std::move(entry));
  }
  return 0;
}

// The rows' names: --label, else as qprof plot names traces shown together (common/trace_label):
// files of one name in other folders by their paths ("d1/x", "d2/x"), equal names by their place
// ("a #1", "a #2"), so that no two rows read alike. A job's ranks keep their rank names.
void name_rows(const CompareCli& o, Rows& rows) {
  // --pivot reads each label as ROW/COLUMN: a name made up here would make up a cell, and two rows
  // of one cell must stay an error.
  if (!o.pivot.empty()) {
    for (std::size_t i = 0; i < o.labels.size() && i < rows.entries.size(); ++i) rows.entries[i].label = o.labels[i];
    return;
  }
  std::vector<std::string> paths, labels;
  for (std::size_t i = 0; i < rows.entries.size(); ++i) {
    const bool file = i < rows.files.size() && rows.job == nullptr;
    paths.push_back(rows.entries[i].runs.empty() ? std::string() : rows.entries[i].runs.front()->source);
    labels.push_back(i < o.labels.size() ? o.labels[i] : file ? std::string() : rows.entries[i].label);
  }
  std::vector<std::string> names = trace_names(paths, labels);
  mark_equal_names(names);
  for (std::size_t i = 0; i < names.size(); ++i) rows.entries[i].label = std::move(names[i]);
}

Result<int> compare_action(CompareCli& o, const Invocation& invocation) {
  o.files.insert(o.files.end(), invocation.after_dashdash.begin(), invocation.after_dashdash.end());
  if (auto checked = check_request(o); !checked) return checked.failure();
  Rows rows;
  if (auto read = read_files(o, rows); !read) return read.failure();
  const Result<int> ran = run_commands(o, rows);
  if (!ran || *ran != 0) return ran;
  // Interrupted, the table has the runs done and the interruption's status wins; a failed
  // command's status wins over qprof's own 2.
  const int failed = rows.ran.interrupted ? rows.ran.interrupted : rows.ran.failed;
  if (rows.entries.empty()) return Failure{"interrupted before a run ended: nothing to compare", failed};
  if (!o.sweep.empty()) return print_sweep_model(o, rows.entries, failed);
  // One job's ranks: a row per rank named by its rank, and the job's total as the last row.
  if (o.commands.empty() && o.baseline.empty()) {
    std::vector<const Trace*> ranks;
    for (const CompareEntry& e : rows.entries) ranks.push_back(e.runs.front());
    if (analysis::is_one_job(ranks) && !analysis::job_streams(ranks)) {
      if (auto whole = read_whole(rows.files); !whole) return whole.failure();
    }
    Result<JobRow> job = add_job_row(o, rows.entries);
    if (!job) return job.failure();
    rows.job = std::move(job->trace);
    rows.job_file = std::move(job->file);
    rows.highest_note = std::move(job->highest_note);
  }
  name_rows(o, rows);
  const Result<int> printed =
      print_comparison(o, rows.entries, rows.highest_note, rows.job != nullptr, failed ? failed : kUsageError);
  if (!printed) return printed;
  return failed ? failed : *printed;
}

}  // namespace

namespace {

constexpr const char* kCompareFooter =
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
    "--sweep, --plot draws the footprint (else Σ RSS peak) against NAME into a .png, .svg or .pdf\n"
    "(not -): the runs, the fit, the limit and the solved value.\n"
    "Budgets, on the --metric peak (the median of repeated runs): --max-peak on every row but\n"
    "--baseline; --max-growth on every row against the first. Exit status: 3 when one is exceeded,\n"
    "2 for usage errors, unreadable traces, or a budget that could not be checked; a failed command's\n"
    "own status wins. Interrupted (SIGINT, SIGTERM, SIGHUP, SIGQUIT): the table of the runs done, and\n"
    "128+N.";

// The rows (files, commands run first, their labels) and what the table shows of them. The three
// groups register in the order --help lists them.
void add_row_options(CLI::App& cmp, CompareCli& o) {
  cmp.add_option("files", o.files, "Trace files (.dat of qprof or mprof)");
  cmp.add_option("--label", o.labels,
                 "Row name, one per use in row order, or a comma list (default: the file name, or the command)")
      ->allow_extra_args(false)
      ->delimiter(',');
  cmp.add_option("--run", o.commands, "Run this shell command under qprof first and compare its trace (repeatable)");
  cmp.add_option("--repeat", o.repeat, "Run each --run command N times: the median, and min-max")
      ->check(CLI::Range(1, 1000));
  cmp.add_flag("--stages", o.stages, "Also the peak inside each stage");
  cmp.add_option("--format", o.format, "text (default), md, csv or json")->check(format_check());
  cmp.add_option("--unit", o.unit,
                 "Unit of sizes: B, KiB, MiB, GiB, KB, MB, GB (default: MiB or GiB for text, bytes for csv/json)")
      ->check(unit_check());
  cmp.add_option("--metric", o.metric,
                 "Metric of --stages, of the ratio column, of the marks, of --plot and of budgets (default: the "
                 "footprint, shared pages once, where every trace recorded it, else Σ RSS; rss: Σ RSS as mprof "
                 "counts it)")
      ->check(metric_check());
}

// The baseline, the budgets, the chart, the pivot and the sweep model.
void add_verdict_options(CLI::App& cmp, CompareCli& o) {
  cmp.add_option("--baseline", o.baseline, "Reference trace: the first row, that ratios and --max-growth measure from");
  cmp.add_option("--max-growth", o.max_growth,
                 "Budget: a peak at most this much above the first row's (10%, 200MiB; a bare number is MiB)")
      ->check(growth_check());
  cmp.add_option("--max-peak", o.max_peak,
                 "Budget: a peak at most SIZE (4GiB, 512MB; a bare number is MiB), or PCT (90%) of the memory limit "
                 "each row's traces "
                 "recorded")
      ->check(budget_check());
  cmp.add_option("--plot", o.plot,
                 "Also draw the runs overlaid (aligned at t=0) into OUT: .png, .svg, .pdf, or - (text); with --sweep, "
                 "the model's chart: .png, .svg or .pdf")
      ->check([](const std::string& out) -> std::string {
        return plot::format_for(out) ? "" : "'" + out + "' is not .png, .svg, .pdf or -";
      });
  cmp.add_option("--pivot", o.pivot,
                 "Fold the rows into a grid named ROWS,COLUMNS (e.g. model,method): each row's label is "
                 "ROW/COLUMN, each cell the peak of --metric, and a last column names the lowest")
      ->expected(2)
      ->allow_extra_args(false)
      ->delimiter(',');
  cmp.add_option("--sweep", o.sweep,
                 "Read the rows as a sweep over NAME (labels or file names carry NAME=VALUE, as qprof sweep names "
                 "them): each figure fitted against NAME, linear or power law")
      ->excludes("--pivot");
  cmp.add_option("--at", o.at, "With --sweep: predict each figure at this value of NAME");
  cmp.add_option("--limit", o.limit,
                 "With --sweep: the largest NAME whose predicted footprint (or Σ RSS peak) fits SIZE or PCT of the "
                 "limit in force (default: the limit the first trace recorded)")
      ->check(budget_check());
}

// The text table's width, the facet chart, a job's time axis, and the --run commands' traces.
void add_layout_options(CLI::App& cmp, CompareCli& o) {
  cmp.add_flag("--wide", o.wide,
               "Text: every column, however wide (by default a table fits the terminal and names what it left out)");
  cmp.add_flag("--plot-facet", o.plot_facet, "With --plot: one small panel per run instead of one overlay");
  cmp.add_option("--align", o.align,
                 "Traces of one job's ranks get a row each and the job's total: wall (default) or start lays them "
                 "on one time axis")
      ->check(CLI::IsMember({"wall", "start"}));
  cmp.add_option("-o,--output-prefix", o.prefix,
                 "Trace names of --run (default qprof_compare: qprof_compare-1.dat, …; where one exists, the next free "
                 "qprof_compare-1.run2.dat, …: never overwritten)");
  add_sampling_options(cmp, o.run);
}

}  // namespace

Command add_compare(CLI::App& app, const Invocation& invocation) {
  auto opts = std::make_shared<CompareCli>();
  CLI::App* cmp = app.add_subcommand("compare", "Compare runs side by side: duration, peaks, disk, stages");
  cmp->footer(kCompareFooter);
  add_row_options(*cmp, *opts);
  add_verdict_options(*cmp, *opts);
  add_layout_options(*cmp, *opts);
  return {cmp, [opts, &invocation] { return compare_action(*opts, invocation); }};
}

}  // namespace qprof::cli
