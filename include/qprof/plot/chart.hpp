// SPDX-License-Identifier: Apache-2.0
// The chart: every decision about what is drawn where, free of gnuplot syntax. Panels stacked
// on a shared time axis; per panel its series (already downsampled and in display units), stage
// bands, checkpoint lines, labels placed without overlap, peak marks, and its key.
//
// A new series kind (a later trace line) means a Role and a few lines in build_chart; the
// script writer and the style template give each role its look.
#pragma once

#include <string>
#include <vector>

#include "qprof/plot/plot.hpp"
#include "qprof/plot/envelope.hpp"
#include "qprof/plot/reduce.hpp"

namespace qprof::plot {

// What a drawn thing is; the style template (plot/qprof.gp) gives each its look.
enum class Role {
  tree,   // the tree's memory, one trace (a line over a light fill)
  trace,  // one trace of an overlay, in its palette colour
  child,  // one process of the tree (CHLD)
  pss,
  uss,
  cgroup,           // the cgroup's usage, page cache included
  gpu_tree,         // GPU memory the tree holds (per device, or summed for an overlay)
  gpu_used,         // a device's whole use, every tenant included
  torch_allocated,  // torch's CUDA tensors on a device, at each checkpoint (TORCH)
  torch_reserved,   // torch's caching allocator on a device, at each checkpoint (TORCH)
  cpu,              // % of one core
  io_read,
  io_write,
  peak_kernel,  // exact figures known at the end, drawn as horizontal lines
  peak_cgroup,
  peak_hwm,
  limit,     // the memory limit in force (header: limit, limit_source), dashed
  dir_size,  // a watched directory's apparent size (palette colours)
  dir_free,  // its file system's free space, dashed
  trend,     // a fitted trend of the memory (plot --trend), dashed
  rss_sum,   // Σ RSS under a filled footprint: a thin line, mprof's figure
};

// A trend fitted on a whole trace (plot --trend): its ends, in seconds from the trace's start
// (TraceData::t0) and bytes.
struct TrendLine {
  std::string series;  // "Σ RSS", "footprint (Σ PSS)"
  Point from, to;
  double bytes_per_second = 0;
  double r2 = 0;
};
// The trends of the trace at `path` (read whole), with times from `t0` (Unix seconds). Each one
// not drawn (too few samples to fit, or a line that explains little of the series) is said to
// `skipped` (the sentence starts with the series' name).
std::vector<TrendLine> fitted_trends(const std::string& path, Seconds t0, const WarningSink& skipped);

struct ChartSeries {
  Role role = Role::tree;
  int color = 0;  // palette slot 1–8 (traces, children, devices); 0: the role's own colour
  bool dashed = false;
  bool steps = false;       // a rate held over each interval
  std::string title;        // key entry; empty: not in the key
  std::vector<Point> data;  // x: seconds from the start; y: the panel's unit
  bool filled = false;      // an area down to 0, opaque: stacked series are drawn largest first
  // A series read on a slower schedule than the samples (PSS, cgroup, GPU): a point at each
  // reading (`marks`), and no line across a gap of more than `gap` seconds (0: none).
  bool marks = false;
  double gap = 0;
  std::vector<std::string> title_more{};  // the key entry's further lines, where it is wider than the key
};

// A stage: a shaded band over the whole panel (one trace), or a bar in the trace's own lane at
// the top of the panel (an overlay: one lane per trace, so that stage timings compare).
struct ChartBand {
  double x0 = 0, x1 = 0;
  int shade = 0;          // alternates 0/1 between neighbouring stages
  int color = 0;          // a trace's palette slot (lanes); 0: neutral shades
  double y0 = 0, y1 = 1;  // graph fractions
};

struct ChartVLine {
  double x = 0;
  int color = 0;      // palette slot; 0: neutral
  bool exit = false;  // the command was killed or timed out here
  bool dashed = true;
};

enum class LabelKind { stage, checkpoint, exit, peak, title, facet, note };

struct ChartLabel {
  std::string text;  // display text; escaped only by the script writer
  LabelKind kind = LabelKind::checkpoint;
  int color = 0;  // palette slot; 0: the kind's own colour
  enum class Coords { first_graph, first_first, screen } coords = Coords::first_graph;
  double x = 0, y = 0;
  bool right = false;           // right-aligned at x
  bool center = false;          // centred at x
  double dx_em = 0, dy_em = 0;  // offset, in ems
};

struct ChartPoint {
  double x = 0, y = 0;
  int color = 0;
};

struct Box {
  double left = 0, right = 1, bottom = 0, top = 1;  // fractions of the canvas, 0 = bottom/left
};

struct ChartPanel {
  Panel kind = Panel::memory;
  Box box;
  std::string ylabel;
  double xmin = 0, xmax = 1, ymin = 0, ymax = 1;
  bool xtic_labels = false;  // the bottom panel only
  bool key = false;
  double key_x = 0, key_y = 0;  // canvas fractions: the key's top-left corner
  std::vector<ChartBand> bands;
  std::vector<ChartVLine> vlines;
  std::vector<ChartLabel> labels;
  std::vector<ChartPoint> points;  // peak marks
  std::vector<ChartSeries> series;
};

enum class TimeFormat { seconds, minutes, hours };

struct Chart {
  Format format = Format::png;
  int width = 1280, height = 720;  // pixels; characters for text
  double em = 13.3;                // pixels per em of the base font
  double font_size = 10;           // the terminal's font size value for that em
  TimeFormat time_format = TimeFormat::seconds;
  double xtic_step = 0;  // 0: gnuplot's choice
  std::string xlabel;
  std::vector<ChartLabel> canvas_labels;  // title, facet titles, notes (screen coordinates)
  std::vector<ChartPanel> panels;         // top to bottom
  std::vector<std::string> notes;         // also given to the caller as warnings
};

struct TraceInput {
  const TraceData* data;
  std::string label;
  bool faint = false;               // see Input::faint
  std::vector<TrendLine> trends{};  // with --trend
};

// `width`, `height` as resolved (never 0). Fails when nothing can be drawn (every trace empty
// within the window).
Result<Chart> build_chart(const std::vector<TraceInput>& traces, const PlotOptions& options, Format format, int width,
                          int height);

// The size when the options give none (not for text): 1280 wide, tall enough for the panels
// of each of `stacks` stacks (one per trace with --facet, else one).
std::pair<int, int> default_size(const std::vector<Panel>& panels, std::size_t stacks);

// The panels to draw: the options' list, or memory plus gpu when a trace has GPU samples.
std::vector<Panel> resolve_panels(const std::vector<TraceInput>& traces, const PlotOptions& options);

}  // namespace qprof::plot
