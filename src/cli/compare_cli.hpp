// SPDX-License-Identifier: Apache-2.0
// qprof compare's options, and the parts of its output that compare.cpp's action composes
// (compare_output.cpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "qprof/analysis/compare.hpp"
#include "qprof/common/failure.hpp"
#include "qprof/record/session.hpp"
#include "qprof/report/report.hpp"
#include "job_trace_file.hpp"

namespace qprof::cli {

struct CompareCli {
  record::RunOptions run;
  std::vector<std::string> files;
  std::vector<std::string> labels;
  std::vector<std::string> commands;
  int repeat = 1;
  bool stages = false;
  std::string format = "text";
  std::string unit;
  std::string metric;  // empty: the footprint where every trace recorded it, else Σ RSS
  std::string baseline;
  std::string max_growth;
  std::string max_peak;
  std::string prefix = "qprof_compare";
  std::string plot;  // --plot OUT: the overlay chart of every run
  bool plot_facet = false;
  std::string align = "wall";      // a job's ranks: how their traces share one time axis
  std::vector<std::string> pivot;  // --pivot ROWS,COLUMNS: the two names of the grid's axes
  std::string sweep;               // --sweep NAME: the rows as a model of each figure against NAME
  std::optional<double> at;        // --at VALUE: with --sweep, predict there
  std::string limit;               // --limit SIZE: with --sweep, solve for it
  bool wide = false;               // --wide: every column in text, however wide
};

// The budgets' verdicts (--max-peak, --max-growth): a column for the table, and whether one was
// exceeded or could not be checked.
struct Verdicts {
  std::vector<report::RowBudget> rows;
  bool over = false;
  bool unknown = false;  // a row without the metric: the budget could not be checked
};
Result<Verdicts> check_budgets(const CompareCli& o, const std::vector<analysis::CompareEntry>& entries,
                               const analysis::Comparison& c);

// Text fits the terminal (80 columns into a pipe): the columns that matter most, the rest named
// under the table. The machine formats and Markdown keep every column.
report::RenderOptions render_options(const CompareCli& o);
// --sweep NAME: the rows as a model of each figure against NAME, printed. Returns `failed` (a
// failed command's status, or 0); where the model fails, that Failure with `failed` (or 2).
Result<int> print_sweep_model(const CompareCli& o, const std::vector<analysis::CompareEntry>& entries, int failed);
// One job's ranks (the rows are one job's traces): each row named by its rank, the job's total
// appended as the last row. Empty where the rows are not one job.
struct JobRow {
  std::unique_ptr<trace::Trace> trace;
  std::unique_ptr<JobTraceFile> file;  // where `trace` was summed to and is read from again
  std::string highest_note;            // "highest peak of a rank: …"
};
Result<JobRow> add_job_row(const CompareCli& o, std::vector<analysis::CompareEntry>& entries);
// The table of the rows (or its --pivot grid), its notes under it and the chart, printed; the
// status of the budgets (0, 2: one not checked, 3: one exceeded). `job_row`: the last row is one
// job's total; `failure_status`: what a failure here exits with.
Result<int> print_comparison(const CompareCli& o, const std::vector<analysis::CompareEntry>& entries,
                             const std::string& highest_note, bool job_row, int failure_status);
// The chart of the compared runs (--plot), through the plot module.
Result<void> draw(const CompareCli& o, const std::vector<analysis::CompareEntry>& entries);
// "+12.5%".
std::string percent(double fraction);
// Where the peak of each run of a row was: "in stage 'Calibration'", several joined.
std::string where_of_row(const analysis::CompareEntry& e, analysis::Metric m);

}  // namespace qprof::cli
