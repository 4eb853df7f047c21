// SPDX-License-Identifier: Apache-2.0
// A sweep read as a model: each figure of the runs (footprint, Σ RSS peak, duration) fitted
// against the swept parameter, a line and a power law, the better one kept; what it predicts at a
// value not run, and the largest value whose prediction fits a limit.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "qprof/analysis/trend.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof::analysis {

// qprof fit's limits for one run (qprof sweep --fit writes them beside its trace): the smallest
// limit it runs in and the smallest at full speed, in bytes.
struct FitLimits {
  std::optional<double> runs_in, full_speed;
};

// The runs at one value of the parameter (several with --repeat).
struct SweepPointRuns {
  double value = 0;
  std::vector<const trace::Trace*> runs;
  std::vector<FitLimits> fits;  // runs[i]'s, where fits.size() == runs.size(); else none
};

struct FigureModel {
  std::string key;           // "footprint", "unreclaimable", "peak_rss", "duration", "fit_runs_in", "fit_full_speed"
  std::string title;         // "footprint (Σ PSS peak)", "Σ RSS peak", "duration"
  bool bytes = true;         // else seconds
  std::vector<double> x, y;  // the points with the figure: the value, the median of its runs
  std::vector<double> low, high;  // the runs' min and max at each point
  std::optional<LineFit> line;
  std::optional<PowerFit> power;
  // The power law is kept only where it explains clearly more than the line (R² higher by more
  // than kPowerMargin): a line is the simpler model, and the one users read ("+30 MiB a worker").
  bool power_chosen = false;
  static constexpr double kPowerMargin = 0.01;

  bool fitted() const { return line.has_value(); }
  double r2() const;
  double predict(double x) const;
  // The largest value whose predicted figure is at most `limit`; nullopt where the model does not
  // rise (then every value fits, or none).
  std::optional<double> solve(double limit) const;
  // Half the mean spread (max − min) of the repeated runs: the ± of a prediction; 0 without repeats.
  double spread() const;
};

struct SweepModel {
  std::string parameter;
  bool integer_values = true;        // every value run is a whole number (workers): solved values are floored
  std::vector<FigureModel> figures;  // those some run has; unfitted with fewer than 2 values
};

// Runs that did not complete (a non-zero exit) should be left out by the caller: a job killed
// half-way says nothing of what the value needs.
SweepModel sweep_model(const std::string& parameter, const std::vector<SweepPointRuns>& points);

}  // namespace qprof::analysis
