// SPDX-License-Identifier: Apache-2.0
// The chart builder's private parts, shared by its files: chart.cpp (traces, x range, units,
// panels), chart_series.cpp (what each panel draws), chart_labels.cpp (checkpoints, stages, peak
// and title labels), chart_layout.cpp (geometry, y ranges, the time axis).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "qprof/common/units.hpp"
#include "qprof/plot/chart.hpp"
#include "qprof/plot/labels.hpp"

namespace qprof::plot::chart_detail {

inline constexpr int kPalette = 8;
inline constexpr std::size_t kMaxStageBands = 1000;  // per trace, in a window: the first ones
inline constexpr std::size_t kMaxLanesPerTrace = 3;  // an overlay's lanes for one trace's stages
inline constexpr std::size_t kMaxChildren = 7;  // per trace, the highest peaks: palette slots 2–8 (1 is the tree's)

int palette_slot(std::size_t i);
double panel_weight(Panel p);
std::string fmt(const char* f, double v);
std::string bytes_text(double bytes, const std::optional<Unit>& unit);
std::string metric_name(const TraceData& d);
// The legend's name of a --metric series: "tree PSS".
std::string metric_title(const std::string& metric);
std::string signal_name(int sig);
// Rates of a cumulative counter, held over each interval (for `steps`): the point at t[i-1]
// carries the rate between t[i-1] and t[i]; a last point closes the final interval.
//
// An interval much shorter than the others (the extra sample at a marker, the last one at the
// exit) is merged into its neighbour: counters move in steps (CPU time in 10 ms ticks), and a
// step over 2 ms would read as 500 %.
std::vector<Point> rates(const std::vector<Point>& cumulative, double scale);
std::vector<Point> scaled(const std::vector<Point>& pts, double divisor);
double max_of(const std::vector<Point>& pts, double xmin, double xmax);

// A label waiting for its place: anchored on a band (x0 < x1) or a line (x0 == x1).
struct LabelSeed {
  std::string text;
  LabelKind kind;
  int color;
  double x0, x1;
};

// One panel before the geometry is known.
struct Draft {
  ChartPanel panel;
  std::size_t stack = 0;
  bool top_of_stack = false;
  double data_max = 0;  // display units
  std::vector<LabelSeed> seeds;
  struct LaneStage {
    int lane, shade;
    LabelSeed seed;
  };
  std::vector<LaneStage> lane_stages;  // overlays: stages as bars, in lanes of their trace
  int lanes = 0;
  std::optional<ChartPoint> peak;  // with a label (one trace per stack)
  std::string peak_text;
  LabelLayout layout;
  double plot_h = 0, plot_w = 0, plot_left = 0, plot_top = 0;  // pixels, from the top-left
};

struct Units {
  std::optional<Unit> chosen;  // --unit
  Unit memory = Unit::MiB;
  Unit gpu = Unit::MiB;
  Unit io = Unit::MiB;  // per second
};

class Builder {
 public:
  Builder(const std::vector<TraceInput>& traces, const PlotOptions& o, Format f, int w, int h)
      : all_(traces), o_(o), format_(f), W_(w), H_(h) {}

  Result<Chart> build();

 private:
  Result<void> select_traces();
  void x_range();
  void choose_units();
  void drafts();
  void add_series(Draft& d, ChartSeries s);
  // `s` as a series of readings when it was read less often than `t`'s samples: its gaps and,
  // where they fall apart on the chart, its points (chart_series.cpp).
  ChartSeries readings(ChartSeries s, const TraceData& t) const;
  void hline(Draft& d, Role role, int color, double y, std::string title);
  void memory_panel(Draft& d, const std::vector<TraceInput>& in);
  void one_trace_memory(Draft& d, const TraceInput& in, const Series& main, double unit);
  void children(Draft& d, const TraceInput& in, bool single, double unit);
  // The kernel's exact peaks as lines; one far above the drawn series as a note naming `panel`.
  void exact_peaks(Draft& d, const TraceData& t, int color, double unit, const std::string& panel);
  void gpu_panel(Draft& d, const std::vector<TraceInput>& in);
  void torch_series(Draft& d, const TraceData& t, double unit);
  void cpu_panel(Draft& d, const std::vector<TraceInput>& in);
  void io_panel(Draft& d, const std::vector<TraceInput>& in);
  // chart_usage.cpp: KINDS, TASKS and GPUUTIL panels.
  void memory_kinds_panel(Draft& d, const std::vector<TraceInput>& in);
  void tasks_panel(Draft& d, const std::vector<TraceInput>& in);
  void vsz_panel(Draft& d, const std::vector<TraceInput>& in);
  void gpu_util_panel(Draft& d, const std::vector<TraceInput>& in);
  void disk_panel(Draft& d, const std::vector<TraceInput>& in);  // chart_disk.cpp
  // The limit in force as a line; one far above the drawn series as a note, naming `panel` where
  // another panel's limit differs (one machine's MemTotal is said once).
  void limit_line(Draft& d, const TraceData& t, double unit, const std::string& panel);  // chart_disk.cpp
  void trend_lines(Draft& d, const TraceInput& in, int color, double unit);              // chart_trend.cpp
  int trace_color(const TraceInput& t) const;
  // Stages, checkpoints and the end of a killed command, in every panel; labels only on top.
  void annotations(Draft& d, const std::vector<TraceInput>& in);
  // Width in pixels of the y tic labels of an axis reaching `ymax`.
  double tic_label_width(double ymax) const;
  void geometry();
  double key_margin();
  void wrap_key_titles(std::size_t chars);
  double left_margin() const;
  double top_chrome() const;
  double stack_panels(double plot_left, double plot_right);
  void canvas_labels(double plot_left, double plot_right, double bottom);
  void note_labels(double bottom);
  bool any_seeds() const;
  std::string title_text() const;
  void place_labels();
  void y_ranges();
  double headroom(const Draft& d) const;
  void lane_stages(Draft& d);
  void row_labels(Draft& d);
  void peak_label(Draft& d);
  void time_axis();

  // A note under the chart, wrapped to its width here: a long one goes on over the next lines
  // (its end is often its point), each drawn as it is. Said once: facets of one machine's
  // traces would each say its MemTotal limit.
  void note(const std::string& n);
  std::vector<std::string> said_;  // the notes given to note()
  std::size_t note_chars() const;  // a note's line, in characters

  // The canvas fraction of a height `from_top` (pixels; rows of a text chart). gnuplot's dumb
  // terminal maps a fraction onto H-1 rows (H_ is that there), truncating a margin's and rounding
  // a label's: a quarter row toward the top puts both on the row meant.
  double screen_y(double from_top) const { return 1.0 - (text_ ? from_top - 0.25 : from_top) / H_; }

  double lane_h() const { return text_ ? 1.0 : 1.2 * line_; }
  // Room between a panel's top and its first stage lane.
  double lane_pad() const { return text_ ? 0 : 0.3 * line_; }

  // Width of an average character: `ems` of the font, or one cell of a text chart.
  double char_w(double ems) const { return text_ ? 1.0 : ems * em_; }

  double px(const Draft& d, double x) const { return d.plot_left + (x - xmin_) / (xmax_ - xmin_) * d.plot_w; }

  const std::vector<TraceInput>& all_;
  const PlotOptions& o_;
  Format format_;
  double W_, H_;
  bool text_ = false;
  double em_ = 13, line_ = 17;
  std::vector<TraceInput> traces_;
  double xmin_ = 0, xmax_ = 1;
  Units units_;
  std::vector<Panel> panels_;
  std::vector<Draft> drafts_;
  std::vector<std::pair<std::size_t, double>> facet_titles_;
  Chart chart_;
};

}  // namespace qprof::plot::chart_detail
