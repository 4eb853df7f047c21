// SPDX-License-Identifier: Apache-2.0
// A Chart as a gnuplot program: the style template (plot/qprof.gp, then the user's --style),
// fixed margins per panel, and one `plot` per panel whose data follows inline ('-').
//
// Every string from a trace or a file name goes through gp_string(); the only other text is
// qprof's own and the style files'. The output file is never named in the script: gnuplot
// writes to a descriptor qprof opened for it ("/dev/fd/3"), so no path reaches gnuplot either.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "qprof/plot/chart.hpp"

namespace qprof::plot {

// One element of a plot command.
struct PlotItem {
  std::string spec;  // what follows its data source: "using 1:2 with lines ls 10 title \"…\""
  int data = -1;     // the chunk's data set it draws; -1: `spec` is the whole element ("NaN notitle")
};

struct ScriptChunk {
  std::string commands;                                      // before the plot command
  std::vector<PlotItem> plot;                                // the plot command, if not empty
  std::vector<std::vector<std::pair<double, double>>> data;  // inline data sets, in order
};

struct Script {
  std::vector<ScriptChunk> chunks;
  // The program's commands, plot commands included, without the data sets (which gnuplot-iostream
  // writes after each plot command when the script is run or saved, plot/gnuplot.hpp): what the
  // tests and the fuzzer read.
  std::string commands() const;
};

// A chunk's plot command; `source(i)` is how data set i is read: "'-'" for inline text, or
// "'-' binary …" (the renderer sends binary data: gnuplot reads a pipe one byte per system call
// when it reads text, which made the data cost more than everything else).
std::string plot_command(const ScriptChunk& chunk, const std::function<std::string(std::size_t)>& source);

struct StyleSource {
  std::string name;  // for the script's comments (display only)
  std::string text;  // gnuplot commands
};

// Where gnuplot writes: descriptor 3 (qprof renders so), stdout or a named file (saved scripts).
enum class OutputTarget { fd3, stdout_, named };

// `styles`: qprof's style, then the user's. `output_name` is used for OutputTarget::named only
// (a script saved for the user to run later).
Script write_script(const Chart& chart, const std::vector<StyleSource>& styles, OutputTarget target,
                    const std::string& output_name = {});

// The directories searched for plot/qprof.gp, in order: $QPROF_PLOT_DIR, <exe>/../share/qprof/plot,
// the source tree's plot/ (a build tree), the installed share/qprof/plot.
std::vector<std::string> template_dirs();
// The default style: qprof.gp from the first of `dirs` that has it, else the copy compiled into
// the binary (a binary copied alone still plots).
StyleSource default_style(const std::vector<std::string>& dirs = template_dirs());

}  // namespace qprof::plot
