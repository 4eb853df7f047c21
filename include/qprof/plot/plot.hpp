// SPDX-License-Identifier: Apache-2.0
// qprof plot: memory over time of one trace or several, drawn by gnuplot.
//
// The library entry point (`qprof plot` and `qprof compare --plot` call it): give it traces and
// a plain options struct; it reads each trace in one streaming pass (a 10-million-sample trace
// costs a few MB), builds the chart and has gnuplot render it. Nothing of a trace reaches gnuplot
// as code (see plot/escape.hpp).
//
//   reduce (plot/reduce.hpp)  trace → envelopes of every series, markers, stages, peaks
//   chart  (plot/chart.hpp)   traces → panels, series, bands, labels placed without overlap
//   script (plot/script.hpp)  chart → gnuplot commands and data, with the style template
//   render (plot/gnuplot.hpp) script → gnuplot, through gnuplot-iostream
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qprof/common/failure.hpp"
#include "qprof/common/units.hpp"

namespace qprof::plot {

// Stacked panels sharing the time axis.
enum class Panel { memory, gpu, cpu, io, memory_kinds, tasks, vsz, gpu_util, disk };

// What the output is, from -o's extension; `text` is a character chart for a terminal.
enum class Format { png, svg, pdf, text };

struct Input {
  std::string path;
  std::string label;            // empty: the file's stem
  bool faint = false;           // an overlay line drawn dashed, without its peak mark (a job's ranks under their sum)
  std::optional<Seconds> t0{};  // Unix time of its second 0 (a job's origin); nullopt: its own start
  // qprof's own sum of the other inputs (plot --sum): as complete as they are, and they are each
  // checked, so its missing end record is not said again under its temporary file's name.
  bool sum_of_others = false;
};

struct PlotOptions {
  // A .png, .svg or .pdf file, or "-": a text chart on stdout (gnuplot's dumb terminal).
  std::string output = "-";
  // Pixels (text charts: characters); 0: the default (1280×720 grown for extra panels and
  // facets; text: the terminal's size, else 100×32).
  int width = 0, height = 0;
  std::string title;               // empty: the command line (one trace) or nothing
  std::optional<Unit> unit;        // memory axis unit; nullopt: MiB, or GiB from 10 GiB
  std::optional<double> from, to;  // window in seconds from each trace's start
  bool markers = true;             // checkpoints, stages, exit annotations
  bool children = false;           // one line per process of the tree (CHLD lines, run -M)
  // The memory series drawn for each trace: footprint, rss (MEM), pss, uss, gpu (summed over
  // devices), cgroup (the charge), …; a trace without it is an error. Empty: the default of
  // analysis::choose_metric, the footprint where every trace has it, else Σ RSS (said in a note).
  std::string metric;
  // Set by plot() where the default fell back to Σ RSS: why, for the chart's notes.
  std::string metric_fallback;
  bool facet = false;  // one panel per trace instead of one overlay
  // The fitted trend of Σ RSS (and of Σ PSS where recorded) over the steady part of each run,
  // drawn as a dashed line (mprof plot -s); each trace is then also read whole.
  bool trend = false;
  // Panels from top to bottom; empty: memory, plus gpu when a trace has GPU samples.
  std::vector<Panel> panels;
  std::string style;                // a gnuplot file loaded after qprof's own style
  std::string script;               // also write the complete gnuplot script here
  std::string gnuplot = "gnuplot";  // the program: a name looked up in PATH, or a path
  // Seconds gnuplot may take before it is killed and the chart fails; 0: 30 s plus 1 s per
  // 20 000 data points sent (see render_timeout in gnuplot.hpp).
  double render_timeout = 0;
  // Warnings ("FILE:LINE: …", gnuplot's own), said by the caller (the CLI); empty: none said.
  std::function<void(const std::string&)> warn;
};

// Renders the chart, or says why it could not be made (bad options, no gnuplot, gnuplot failed,
// a trace that cannot be read: FILE:LINE: reason, an empty trace too); `qprof plot` exits 2.
Result<void> plot(const std::vector<Input>& inputs, const PlotOptions& options);

// Helpers the command line shares (each nullopt or false on bad input).
std::optional<Format> format_for(std::string_view output);  // "-" or .png/.svg/.pdf, any case
std::string_view format_name(Format f);
std::optional<std::pair<int, int>> parse_size_spec(std::string_view spec);  // "1280x720"
// "T0,T1", "T0," or ",T1" (seconds from the start, T0 < T1).
std::optional<std::pair<std::optional<double>, std::optional<double>>> parse_window(std::string_view spec);
std::optional<std::vector<Panel>> parse_panels(
    std::string_view spec);  // "memory,gpu,cpu,io,memory-kinds,tasks,vsz,gpu-util,disk"
std::string_view panel_name(Panel p);

}  // namespace qprof::plot
