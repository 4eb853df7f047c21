// SPDX-License-Identifier: Apache-2.0
// qprof sweep's runs: the command once per point of the grid (and per repeat) under qprof, one
// trace per run named by its values, and with --fit qprof fit at each point that ran.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "qprof/analysis/sweep_grid.hpp"
#include "qprof/common/failure.hpp"
#include "qprof/common/speaker.hpp"
#include "qprof/fit/fit.hpp"
#include "qprof/fit/saved_result.hpp"
#include "qprof/record/options.hpp"
#include "qprof/runs/command_runs.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof::runs {

struct SweepRequest {
  record::RunOptions run;                            // the sampling options; each run fills in its command
  std::vector<std::string> command;                  // {NAME} placeholders filled at each point
  std::vector<analysis::SweepParameter> parameters;  // the grid: the first varies slowest
  std::vector<std::string> env;                      // NAME=TEMPLATE, checked
  int repeat = 1;
  std::string output_dir = "qprof_sweep";
  bool stop_on_failure = false;
  bool fit = false;  // qprof fit on each point that ran
  fit::FitOptions fit_options;
  Speaker speaker;  // each run's words and summary (runs::RunRequest)
};

// One run of the sweep: its point, its outcome, its trace (when one could be read back).
struct SweepRun {
  analysis::SweepPoint point;
  int repeat = 1;
  std::string path;
  int status = 0;
  std::unique_ptr<trace::Trace> trace;
  std::string problem;                  // why there is no trace to read
  std::optional<fit::SavedLimits> fit;  // --fit: what qprof fit found at this point
};

struct SweepRuns {
  std::vector<SweepRun> runs;
  int first_failure = 0;  // the exit status of the first run (or fit) that failed
  // A stop signal ended the sweep (during a run, its fit, or between two runs): the status to
  // exit with (128+N), else 0. The runs done are kept.
  int interrupted = 0;
};

// DIR/NAME=VALUE[,NAME2=VALUE2][,repeat=R].dat; `repeat` counts from 1.
std::string sweep_trace_path(const std::string& dir, const analysis::SweepPoint& point, int repeat, int repeats);

// Runs the grid, a progress line per run, until a stop signal (runs::StopLatch) ends it. Fails where the command cannot
// be started, or a trace cannot be created: the same at every point, so no table.
Result<SweepRuns> run_sweep(const SweepRequest& request, const Say& say);

}  // namespace qprof::runs
