// SPDX-License-Identifier: Apache-2.0
// qprof fit's chart: the job's duration against its memory limit, one point per run, with the
// limits it found marked. Drawn by gnuplot as `qprof plot` draws (same style template, escaping
// and runner); the data comes as plain numbers so that plot needs nothing of fit.
#pragma once

#include <string>
#include <vector>

#include "qprof/common/failure.hpp"
#include "qprof/plot/script.hpp"

namespace qprof::plot {

struct FitChartPoint {
  double limit_mib = 0;
  double seconds = 0;
  enum Kind { completed, too_slow, oom_killed, failed } kind = completed;
};

struct FitChartMark {
  std::string label;  // "runs in", "within 4x", "full speed"
  double limit_mib = 0;
};

struct FitChart {
  std::string command;  // the title: untrusted, escaped
  std::vector<FitChartPoint> points;
  double baseline_seconds = 0;  // the unlimited run, a horizontal line
  double cutoff_seconds = 0;    // where a probe was stopped: too slow points sit there
  std::vector<FitChartMark> marks;
};

// Renders `chart` to `output` (.png, .svg or .pdf), replaced only when gnuplot succeeded.
// Fails with no gnuplot, an output of another kind, or gnuplot's failure.
Result<void> plot_fit(const FitChart& chart, const std::string& output, const WarningSink& warn,
                      const std::string& gnuplot = "gnuplot");

// The gnuplot program (exposed for the tests: nothing of the chart's text is code).
Script fit_script(const FitChart& chart, const std::string& format);

}  // namespace qprof::plot
