// Talking to gnuplot. The program is started without a shell (posix_spawn) and the pipe to its
// stdin is handed to gnuplot-iostream, which sends the commands and the data; qprof keeps the
// process id to collect gnuplot's exit status and its messages (the 2014 gnuplot-iostream's own
// popen() loses both). gnuplot writes the chart to a descriptor qprof opened (its fd 3): no
// path is ever named in the script.
#pragma once

#include <string>

#include "qprof/plot/reduce.hpp"
#include "qprof/plot/script.hpp"

namespace qprof::plot {

// `program` as a runnable path: itself when it holds a '/', else the first match in PATH; empty
// when there is none.
std::string find_program(const std::string& program);

// Runs `gnuplot` (a path) on the script; `output_fd` becomes its descriptor 3 (-1: none, the
// chart goes to stdout). Throws PlotError with gnuplot's own messages when it fails; what it
// says on success (warnings) goes to `warn`.
void run_gnuplot(const std::string& gnuplot, const Script& script, int output_fd, const WarningSink& warn);

// Writes the script, data included, to a file that `gnuplot FILE` renders (through
// gnuplot-iostream's file mode). Throws PlotError when the file cannot be written.
void save_script(const Script& script, const std::string& path);

}  // namespace qprof::plot
