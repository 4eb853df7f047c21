// SPDX-License-Identifier: Apache-2.0
// The chart of a sweep's model (compare --sweep --plot, sweep --plot): one figure against the
// parameter, the runs' values as points (their min and max too where runs were repeated), the
// fitted line or power law, the limit and the largest value solved for it. Drawn by gnuplot
// through the same script and renderer as qprof plot: no text of a trace or label becomes code.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "qprof/analysis/sweep_model.hpp"
#include "qprof/common/failure.hpp"
#include "qprof/common/units.hpp"
#include "qprof/plot/plot.hpp"
#include "qprof/plot/script.hpp"

namespace qprof::plot {

struct SweepChartOptions {
  std::string output;               // .png, .svg or .pdf
  std::string script;               // also save the gnuplot program here
  std::string gnuplot = "gnuplot";  // a name looked up in PATH, or a path
};

// What a sweep's chart can be written into: a picture, never a text chart (its points and
// curve would not read in text).
inline constexpr std::string_view kSweepChartFiles = "a sweep's chart is a .png, .svg or .pdf file";

// Whether `output` names a file a sweep's chart can be written into: checked before any run or
// read, so that a wrong --plot costs nothing.
bool sweep_chart_output(std::string_view output);

// The gnuplot program of the chart (its data inline). A limit far above the data drawn
// (off_chart.hpp) is a note under the chart, with the solved value, instead of a line.
Script sweep_script(const analysis::SweepModel& model, const analysis::FigureModel& figure, std::optional<Bytes> limit,
                    std::optional<double> solved, Format format);

// Fails with no gnuplot, a bad output, or gnuplot's failure. `solved`: the largest value whose
// prediction fits `limit` (drawn where both are given).
Result<void> plot_sweep(const analysis::SweepModel& model, const analysis::FigureModel& figure,
                        std::optional<Bytes> limit, std::optional<double> solved, const SweepChartOptions& options);

}  // namespace qprof::plot
