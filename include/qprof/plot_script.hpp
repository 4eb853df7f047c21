// A Chart as a gnuplot program: the style template (plot/qprof.gp, then the user's --style),
// fixed margins per panel, and one `plot` per panel whose data follows inline ('-').
//
// Every string from a trace or a file name goes through gp_string(); the only other text is
// qprof's own and the style files'. The output file is never named in the script: gnuplot
// writes to a descriptor qprof opened for it ("/dev/fd/3"), so no path reaches gnuplot either.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "qprof/plot_chart.hpp"

namespace qprof::plot {

struct ScriptChunk {
  std::string commands;                                   // ends with a plot command, or not
  std::vector<std::vector<std::pair<double, double>>> data;  // inline data sets, in order
};

struct Script {
  std::vector<ScriptChunk> chunks;
  // The whole program as gnuplot would read it (commands with each data set and its "e").
  std::string text() const;
};

struct StyleSource {
  std::string name;  // for the script's comments (display only)
  std::string text;  // gnuplot commands
};

// Where gnuplot writes: a file on descriptor 3, or stdout (text charts).
enum class OutputTarget { fd3, stdout_, named };

// `styles`: qprof's style, then the user's. `output_name` is used for OutputTarget::named only
// (a script saved for the user to run later).
Script write_script(const Chart& chart, const std::vector<StyleSource>& styles, OutputTarget target,
                    const std::string& output_name = {}, bool ansi_colors = false);

// The directories searched for plot/qprof.gp, in order: $QPROF_PLOT_DIR, <exe>/../share/qprof/plot,
// the source tree's plot/ (a build tree), the installed share/qprof/plot.
std::vector<std::string> template_dirs();
// The default style's text; throws PlotError naming the places it looked.
StyleSource default_style();

}  // namespace qprof::plot
