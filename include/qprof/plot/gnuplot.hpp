// SPDX-License-Identifier: Apache-2.0
// Talking to gnuplot. The program is started without a shell, through Boost.Process
// (common/child_process.hpp), and gnuplot-iostream writes the script to a pipe on its stdin, the
// data in binary records (binFmt1d, sendBinary1d); qprof keeps the process id to collect
// gnuplot's exit status and its messages, and to kill it when it takes too long. gnuplot writes
// the chart to a descriptor qprof opened (its fd 3): no path is ever named in the script.
#pragma once

#include <string>

#include "qprof/common/failure.hpp"

#include "qprof/plot/reduce.hpp"
#include "qprof/plot/script.hpp"

namespace qprof::plot {

// How long gnuplot may take to draw a script: kRenderBaseSeconds, plus a second for every
// kRenderPointsPerSecond data points it is sent (a chart sends a few thousand: its envelopes are
// as wide as the chart, whatever the length of the trace).
inline constexpr double kRenderBaseSeconds = 30;
inline constexpr double kRenderPointsPerSecond = 20000;
double render_timeout(const Script& script);

// The path of the gnuplot program `name` (--gnuplot: a name looked up on PATH, or a path), or
// the Failure that says, after `who` ("qprof plot", "--plot"), what is missing and what to install.
Result<std::string> find_gnuplot(const std::string& name, const std::string& who);

// Runs `gnuplot` (a path) on the script; `output_fd` becomes its descriptor 3 (-1: none, the
// chart goes to stdout). Its Failure carries gnuplot's own messages; what it says on success
// (warnings) goes to `warn`. gnuplot dies with qprof (PR_SET_PDEATHSIG), and is killed, with a
// Failure, when it takes longer than `timeout_s` (0: render_timeout(script)).
Result<void> run_gnuplot(const std::string& gnuplot, const Script& script, int output_fd, const WarningSink& warn,
                         double timeout_s = 0);

// Writes the script, data included, to a file that `gnuplot FILE` renders (the data as text,
// through gnuplot-iostream's send1d: "e" after each set). Fails when the file cannot be written.
Result<void> save_script(const Script& script, const std::string& path);

}  // namespace qprof::plot
