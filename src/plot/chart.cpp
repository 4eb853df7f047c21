// From reduced traces to a Chart: what each panel draws, in which unit, and where every label,
// key and panel goes on the canvas. Geometry is worked out in pixels (characters for text
// charts) so that labels can be kept apart, and handed to gnuplot as fixed margins.
#include "qprof/plot/chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include "qprof/trace/format.hpp"
#include "qprof/plot/escape.hpp"
#include "qprof/plot/labels.hpp"
#include "qprof/common/units.hpp"

namespace qprof::plot {
namespace {

constexpr int kPalette = 8;
constexpr std::size_t kMaxChildren = 7;  // per trace, the highest peaks: palette slots 2–8 (1 is the tree's)

int palette_slot(std::size_t i) { return static_cast<int>(i % kPalette) + 1; }

double panel_weight(Panel p) {
  switch (p) {
    case Panel::memory: return 1.0;
    case Panel::gpu: return 0.6;
    case Panel::cpu:
    case Panel::io: return 0.4;
  }
  return 1.0;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

// A byte count held in a double, back as Bytes without overflow (a PEAK line may say 2^64 - 1).
Bytes to_bytes(double v) {
  if (!(v > 0)) return 0;
  if (v >= 18446744073709549568.0) return ~Bytes{0};  // the largest double below 2^64
  return static_cast<Bytes>(std::round(v));
}

std::string bytes_text(double bytes, const std::optional<Unit>& unit) {
  if (unit) return fmt("%.4g", bytes / unit_bytes(*unit)) + " " + std::string(unit_name(*unit));
  return human_bytes(to_bytes(bytes));
}

std::string metric_name(const TraceData& d) {
  if (d.meta.metric == "pss") return "PSS";
  if (d.meta.metric == "uss") return "USS";
  return "RSS";
}

std::string signal_name(int sig) {
  switch (sig) {
    case 1: return "SIGHUP";
    case 2: return "SIGINT";
    case 3: return "SIGQUIT";
    case 6: return "SIGABRT";
    case 7: return "SIGBUS";
    case 9: return "SIGKILL";
    case 11: return "SIGSEGV";
    case 15: return "SIGTERM";
    default: return "signal " + std::to_string(sig);
  }
}

// Rates of a cumulative counter, held over each interval (for `steps`): the point at t[i-1]
// carries the rate between t[i-1] and t[i]; a last point closes the final interval.
//
// An interval much shorter than the others (the extra sample at a marker, the last one at the
// exit) is merged into its neighbour: counters move in steps (CPU time in 10 ms ticks), and a
// step over 2 ms would read as 500 %.
std::vector<Point> rates(const std::vector<Point>& cumulative, double scale) {
  std::vector<Point> out;
  if (cumulative.size() < 2) return out;
  std::vector<double> gaps;
  for (std::size_t i = 1; i < cumulative.size(); ++i) gaps.push_back(cumulative[i].t - cumulative[i - 1].t);
  std::nth_element(gaps.begin(), gaps.begin() + static_cast<std::ptrdiff_t>(gaps.size() / 2), gaps.end());
  const double shortest = std::max(0.5 * gaps[gaps.size() / 2], 0.0);

  std::vector<Point> kept{cumulative.front()};
  for (std::size_t i = 1; i < cumulative.size(); ++i) {
    const Point& p = cumulative[i];
    const bool last = i + 1 == cumulative.size();
    if (p.t - kept.back().t > shortest || (p.t > kept.back().t && kept.size() == 1 && last)) {
      kept.push_back(p);
    } else if (last && kept.size() > 1) {
      kept.back() = p;  // the last short interval joins the one before
    }
  }
  for (std::size_t i = 1; i < kept.size(); ++i) {
    out.push_back({kept[i - 1].t, std::max(0.0, kept[i].v - kept[i - 1].v) / (kept[i].t - kept[i - 1].t) * scale});
  }
  if (!out.empty()) out.push_back({kept.back().t, out.back().v});
  return out;
}

std::vector<Point> scaled(const std::vector<Point>& pts, double divisor) {
  std::vector<Point> out(pts);
  for (Point& p : out) p.v /= divisor;
  return out;
}

double max_of(const std::vector<Point>& pts, double xmin, double xmax) {
  double m = 0;
  for (const Point& p : pts) {
    if (p.t >= xmin && p.t <= xmax) m = std::max(m, p.v);
  }
  return m;
}

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
  std::vector<LaneStage> lane_stages;  // overlays: stages as bars, one lane per trace
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

  Chart build() {
    chart_.format = format_;
    chart_.width = W_;
    chart_.height = H_;
    text_ = format_ == Format::text;
    em_ = text_ ? 1.0 : std::clamp(W_ / 96.0, 10.0, 18.0);
    line_ = text_ ? 1.0 : em_ * 1.3;
    chart_.em = em_;
    chart_.font_size = format_ == Format::png ? em_ * 0.75 : format_ == Format::pdf ? em_ * 0.75 : em_;

    select_traces();
    x_range();
    choose_units();
    panels_ = resolve_panels(traces_, o_);
    drafts();
    geometry();
    time_axis();
    return std::move(chart_);
  }

 private:
  void note(std::string n) { chart_.notes.push_back(std::move(n)); }

  void select_traces() {
    for (const TraceInput& t : all_) {
      if (t.data->mem.envelope().empty()) {
        note(t.label + ": no samples in the time range; not drawn");
      } else {
        traces_.push_back(t);
      }
    }
    if (traces_.empty()) {
      std::string what = all_.size() == 1 ? "the trace has" : "no trace has";
      throw PlotError(what + " no samples between " + fmt("%g", o_.from.value_or(0)) + " s and " +
                      (o_.to ? fmt("%g", *o_.to) + " s" : std::string("its end")) + " (--window)");
    }
  }

  void x_range() {
    // To the last thing recorded: a sample, a checkpoint, or the command's end.
    xmin_ = o_.from.value_or(0.0);
    double end = 0;
    for (const TraceInput& t : traces_) {
      end = std::max(end, t.data->t_end);
      if (!t.data->markers.empty()) end = std::max(end, t.data->markers.back().t);
      if (t.data->exit) end = std::max(end, t.data->exit->t);
      for (const Stage& st : t.data->stages) {
        if (st.closed) end = std::max(end, st.t_end);  // mprof writes FUNC lines after its last sample
      }
    }
    xmax_ = o_.to.value_or(end);
    if (!(xmax_ > xmin_)) xmax_ = xmin_ + 1.0;  // a single sample
  }

  void choose_units() {
    double mem = 0, gpu = 0;
    for (const TraceInput& t : traces_) {
      const TraceData& d = *t.data;
      mem = std::max(mem, d.mem.envelope().max().v);
      if (!d.pss.empty()) mem = std::max(mem, d.pss.envelope().max().v);
      if (!d.cgroup.empty()) mem = std::max(mem, d.cgroup.envelope().max().v);
      for (const auto& [name, b] : d.peaks) mem = std::max(mem, static_cast<double>(b));
      for (const GpuDeviceData& g : d.gpus) {
        if (!g.used.empty()) gpu = std::max(gpu, g.used.envelope().max().v);
        if (!g.tree.empty()) gpu = std::max(gpu, g.tree.envelope().max().v);
      }
    }
    units_.chosen = o_.unit;
    units_.memory = o_.unit.value_or(auto_unit(to_bytes(mem)));
    units_.gpu = o_.unit.value_or(auto_unit(to_bytes(gpu)));
  }

  // ---- panel contents --------------------------------------------------------------------

  void drafts() {
    const std::size_t stacks = o_.facet ? traces_.size() : 1;
    for (std::size_t s = 0; s < stacks; ++s) {
      std::vector<TraceInput> in = o_.facet ? std::vector<TraceInput>{traces_[s]} : traces_;
      for (std::size_t k = 0; k < panels_.size(); ++k) {
        Draft d;
        d.stack = s;
        d.top_of_stack = k == 0;
        d.panel.kind = panels_[k];
        d.panel.xmin = xmin_;
        d.panel.xmax = xmax_;
        switch (panels_[k]) {
          case Panel::memory: memory_panel(d, in); break;
          case Panel::gpu: gpu_panel(d, in); break;
          case Panel::cpu: cpu_panel(d, in); break;
          case Panel::io: io_panel(d, in); break;
        }
        if (d.panel.series.empty()) {
          // A facet whose trace lacks what its neighbours have: say so rather than look broken.
          ChartLabel l;
          l.text = "no " + std::string(panel_name(panels_[k])) + " samples in this trace";
          l.kind = LabelKind::note;
          l.coords = ChartLabel::Coords::first_graph;
          l.x = (xmin_ + xmax_) / 2;
          l.y = 0.5;
          l.center = true;
          d.panel.labels.push_back(std::move(l));
          d.data_max = 1;
        }
        if (o_.markers) annotations(d, in);
        drafts_.push_back(std::move(d));
      }
    }
  }

  void add_series(Draft& d, ChartSeries s) {
    d.data_max = std::max(d.data_max, max_of(s.data, xmin_, xmax_));
    d.panel.series.push_back(std::move(s));
  }

  void hline(Draft& d, Role role, int color, double y, std::string title) {
    ChartSeries s;
    s.role = role;
    s.color = color;
    s.dashed = true;
    s.title = std::move(title);
    s.data = {{xmin_, y}, {xmax_, y}};
    add_series(d, std::move(s));
  }

  void memory_panel(Draft& d, const std::vector<TraceInput>& in) {
    const double unit = unit_bytes(units_.memory);
    d.panel.ylabel = "memory (" + std::string(unit_name(units_.memory)) + ")";
    const bool single = in.size() == 1;
    for (std::size_t i = 0; i < in.size(); ++i) {
      const TraceData& t = *in[i].data;
      const int color = single ? 0 : trace_color(in[i]);
      const Point peak = t.mem.envelope().max();
      const std::string peak_text = bytes_text(peak.v, units_.chosen) + " at " + human_seconds(peak.t);

      if (o_.children) children(d, in[i], single, unit);
      if (single) {
        if (!t.cgroup.empty()) {
          add_series(d, {Role::cgroup, 0, false, false, "cgroup usage (page cache included)", scaled(t.cgroup.points(), unit)});
        }
        if (!t.pss.empty()) {
          add_series(d, {Role::pss, 0, false, false, "PSS of the tree", scaled(t.pss.points(), unit)});
          add_series(d, {Role::uss, 0, false, false, "USS of the tree", scaled(t.uss.points(), unit)});
        }
        // mprof's MEM is the tree only with -C ("include children"): say no more than it knows.
        add_series(d, {Role::tree, 0, false, false, (t.qprof ? "tree " : "") + metric_name(t) + ", peak " + peak_text,
                       scaled(t.mem.points(), unit)});
        exact_peaks(d, t, 0, unit, true);
        d.peak = ChartPoint{peak.t, peak.v / unit, 0};
        d.peak_text = "peak " + peak_text;
      } else {
        std::string title = display_text(in[i].label, 40) + ", peak " + peak_text;
        if (auto it = t.peaks.find(std::string(dat::kPeakCgroup)); it != t.peaks.end()) {
          title += " (cgroup " + bytes_text(static_cast<double>(it->second), units_.chosen) + ")";
        }
        add_series(d, {Role::trace, color, false, false, title, scaled(t.mem.points(), unit)});
        d.panel.points.push_back(ChartPoint{peak.t, peak.v / unit, color});
      }
    }
  }

  void children(Draft& d, const TraceInput& in, bool single, double unit) {
    const TraceData& t = *in.data;
    if (t.children.empty()) {
      note(in.label + ": no per-process samples (CHLD lines; record with qprof run -M)");
      return;
    }
    std::vector<const ChildData*> order;
    for (const ChildData& c : t.children) {
      if (!c.mem.empty()) order.push_back(&c);
    }
    std::stable_sort(order.begin(), order.end(), [](const ChildData* a, const ChildData* b) {
      return a->mem.envelope().max().v > b->mem.envelope().max().v;
    });
    const std::size_t shown = std::min(order.size(), kMaxChildren);
    if (shown < order.size()) {
      note(in.label + ": the " + std::to_string(shown) + " processes with the highest peaks of " +
           std::to_string(order.size()) + " are drawn");
    }
    for (std::size_t k = 0; k < shown; ++k) {
      const ChildData& c = *order[k];
      ChartSeries s;
      s.role = Role::child;
      s.data = scaled(c.mem.points(), unit);
      if (single) {
        s.color = palette_slot(k + 1);
        s.title = "pid " + std::to_string(c.pid) + ", peak " + bytes_text(c.mem.envelope().max().v, units_.chosen);
      } else {
        s.color = trace_color(in);
        s.dashed = true;
        if (k == 0) s.title = display_text(in.label, 40) + ": " + std::to_string(order.size()) + " processes";
      }
      add_series(d, std::move(s));
    }
  }

  void exact_peaks(Draft& d, const TraceData& t, int color, double unit, bool titled) {
    struct Kind {
      std::string_view name;
      Role role;
      const char* title;
    };
    static const Kind kinds[] = {
        {dat::kPeakCgroup, Role::peak_cgroup, "cgroup peak (exact): "},
        {dat::kPeakKernelProcess, Role::peak_kernel, "largest process, kernel peak: "},
        {dat::kPeakHwmSum, Role::peak_hwm, "sum of VmHWM (upper bound): "},
    };
    for (const Kind& k : kinds) {
      auto it = t.peaks.find(std::string(k.name));
      if (it == t.peaks.end()) continue;
      const double b = static_cast<double>(it->second);
      hline(d, k.role, color, b / unit, titled ? k.title + bytes_text(b, units_.chosen) : std::string());
    }
  }

  void gpu_panel(Draft& d, const std::vector<TraceInput>& in) {
    const double unit = unit_bytes(units_.gpu);
    d.panel.ylabel = "GPU memory (" + std::string(unit_name(units_.gpu)) + ")";
    const bool single = in.size() == 1;
    for (const TraceInput& ti : in) {
      const TraceData& t = *ti.data;
      if (single) {
        for (std::size_t k = 0; k < t.gpus.size(); ++k) {
          const GpuDeviceData& g = t.gpus[k];
          const std::string gpu = "GPU" + std::to_string(g.info.index);
          const int color = palette_slot(k);
          if (!g.tree.empty()) {
            add_series(d, {Role::gpu_tree, color, false, false,
                           gpu + ": tree, peak " + bytes_text(g.tree.envelope().max().v, units_.chosen),
                           scaled(g.tree.points(), unit)});
          }
          if (!g.used.empty() && g.used.envelope().max().v > 0) {  // 0: the backend cannot tell
            std::string title = gpu + ": device in use";
            if (g.info.total > 0) title += " of " + bytes_text(static_cast<double>(g.info.total), units_.chosen);
            if (!g.info.name.empty()) title += " (" + display_text(g.info.name, 32) + ")";
            add_series(d, {Role::gpu_used, color, true, false, std::move(title), scaled(g.used.points(), unit)});
          }
        }
      } else if (!t.gpu_total.empty()) {
        add_series(d, {Role::gpu_tree, trace_color(ti), false, false,
                       display_text(ti.label, 40) + ", peak " + bytes_text(t.gpu_total.envelope().max().v, units_.chosen),
                       scaled(t.gpu_total.points(), unit)});
      }
    }
  }

  void cpu_panel(Draft& d, const std::vector<TraceInput>& in) {
    d.panel.ylabel = "CPU (% of one core)";
    const bool single = in.size() == 1;
    for (const TraceInput& ti : in) {
      std::vector<Point> r = rates(ti.data->cpu.last_points(), 100.0);
      if (r.empty()) continue;
      add_series(d, {single ? Role::cpu : Role::trace, single ? 0 : trace_color(ti), false, true,
                     single ? "CPU of the tree" : display_text(ti.label, 40), std::move(r)});
    }
    d.data_max = std::max(d.data_max, 100.0);
  }

  void io_panel(Draft& d, const std::vector<TraceInput>& in) {
    // The unit follows the highest rate of all traces.
    std::vector<std::pair<std::vector<Point>, std::vector<Point>>> rw;
    double top = 0;
    for (const TraceInput& ti : in) {
      rw.emplace_back(rates(ti.data->io_read.last_points(), 1.0), rates(ti.data->io_write.last_points(), 1.0));
      top = std::max({top, max_of(rw.back().first, xmin_, xmax_), max_of(rw.back().second, xmin_, xmax_)});
    }
    const Unit u = o_.unit.value_or(auto_unit(to_bytes(top), Unit::KiB));
    const double unit = unit_bytes(u);
    d.panel.ylabel = "I/O (" + std::string(unit_name(u)) + "/s)";
    const bool single = in.size() == 1;
    for (std::size_t i = 0; i < in.size(); ++i) {
      const std::string who = single ? std::string() : display_text(in[i].label, 40) + ": ";
      const int color = single ? 0 : trace_color(in[i]);
      if (!rw[i].first.empty()) {
        add_series(d, {single ? Role::io_read : Role::trace, color, false, true, who + "storage read",
                       scaled(rw[i].first, unit)});
      }
      if (!rw[i].second.empty()) {
        add_series(d, {single ? Role::io_write : Role::trace, color, !single, true, who + "storage write",
                       scaled(rw[i].second, unit)});
      }
    }
  }

  int trace_color(const TraceInput& t) const {
    for (std::size_t i = 0; i < traces_.size(); ++i) {
      if (traces_[i].data == t.data) return palette_slot(i);
    }
    return 1;
  }

  // Stages, checkpoints and the end of a killed command, in every panel; labels only on top.
  void annotations(Draft& d, const std::vector<TraceInput>& in) {
    const bool single = in.size() == 1;
    for (const TraceInput& ti : in) {
      const TraceData& t = *ti.data;
      const int color = single ? 0 : trace_color(ti);
      int shade = 0;
      bool lane = false;
      for (const Stage& s : t.stages) {
        const double x0 = std::max(s.t_start, xmin_), x1 = std::min(s.t_end, xmax_);
        if (x1 < x0) continue;
        std::string name = display_text(s.name, 60) + (s.closed ? "" : " (no End)");
        if (single) {
          d.panel.bands.push_back(ChartBand{x0, x1, shade, 0, 0, 1});
          if (d.top_of_stack) d.seeds.push_back({std::move(name), LabelKind::stage, 0, x0, x1});
        } else if (d.top_of_stack) {
          if (!lane) {
            lane = true;
            ++d.lanes;
          }
          d.lane_stages.push_back({d.lanes - 1, shade, {std::move(name), LabelKind::stage, color, x0, x1}});
        }
        shade ^= 1;
      }
      for (const PlotMarker& m : t.markers) {
        if (m.stage_edge || m.t < xmin_ || m.t > xmax_) continue;
        d.panel.vlines.push_back(ChartVLine{m.t, color, false, true});
        if (d.top_of_stack) d.seeds.push_back({display_text(m.label, 60), LabelKind::checkpoint, color, m.t, m.t});
      }
      if (t.exit && (t.exit->signal != 0 || t.exit->timed_out || t.exit->status != 0) && t.exit->t >= xmin_ &&
          t.exit->t <= xmax_) {
        std::string what = t.exit->signal != 0 ? "killed by " + signal_name(t.exit->signal)
                                                : "exit status " + std::to_string(t.exit->status);
        if (t.exit->timed_out) what += " (timeout)";
        d.panel.vlines.push_back(ChartVLine{t.exit->t, color, true, false});
        if (d.top_of_stack) d.seeds.push_back({what, LabelKind::exit, color, t.exit->t, t.exit->t});
      }
    }
  }

  // ---- geometry ---------------------------------------------------------------------------

  // Width in pixels of the y tic labels of an axis reaching `ymax`.
  double tic_label_width(double ymax) const {
    const double rounded = std::abs(ymax) < 1e-300 ? 1 : ymax;
    const std::string s = fmt("%.2g", rounded);
    std::size_t chars = s.find('e') != std::string::npos ? 7 : std::max<std::size_t>(fmt("%.0f", rounded).size(), s.size());
    if (rounded < 10) chars = std::max<std::size_t>(chars, 3);  // "0.5", "2.5"
    return text_ ? static_cast<double>(chars) + 1 : (chars * 0.64 + 0.6) * em_;
  }

  void geometry() {
    // Right margin: the widest key.
    const double sample = text_ ? 8 : 3.2 * em_;  // the key's line sample and its gaps
    double key_w = 0;
    for (const Draft& d : drafts_) {
      for (const ChartSeries& s : d.panel.series) {
        if (!s.title.empty()) key_w = std::max(key_w, text_width_px(s.title, em_, text_));
      }
    }
    const double key_cap = W_ * (text_ ? 0.34 : 0.36);
    double right_margin = key_w > 0 ? std::min(key_cap, key_w + sample + 1.5 * em_) : 1.5 * em_;
    if (key_w > 0 && key_w + sample + 1.5 * em_ > key_cap) {
      // Shorten the entries to what fits, at ~0.6 em a character.
      const auto chars = static_cast<std::size_t>(std::max(6.0, (key_cap - sample - 1.5 * em_) / ((text_ ? 1.0 : 0.6) * em_)));
      for (Draft& d : drafts_) {
        for (ChartSeries& s : d.panel.series) s.title = display_text(s.title, chars);
      }
    }

    // Left margin: y label and the widest tic labels (the axes reach a little above the data).
    double tics = 0;
    for (const Draft& d : drafts_) tics = std::max(tics, tic_label_width(d.data_max * 1.25));
    const double left_margin = (text_ ? 2 : 1.7 * line_) + tics + (text_ ? 0 : 0.4 * em_);

    // Vertical layout, from the top.
    const bool has_title = !title_text().empty();
    const double top_chrome = has_title ? 2.0 * line_ : (text_ ? 1 : 0.8 * line_);
    const double facet_title = o_.facet ? (text_ ? 1 : 1.5 * line_) : 0;
    const double panel_gap = text_ ? 1 : 0.7 * line_;
    const double stack_gap = text_ ? 0 : 0.5 * line_;
    const std::size_t stacks = o_.facet ? traces_.size() : 1;

    // Notes are known only after the labels are placed, which needs the widths: reserve room for
    // the notes we already have plus one for label notes.
    const auto bottom_chrome = [&](std::size_t notes) {
      return (text_ ? 2.0 : 2.9 * line_) + static_cast<double>(notes) * (text_ ? 1 : 1.15 * line_) + (text_ ? 0 : 0.3 * line_);
    };
    std::size_t reserved_notes = chart_.notes.size() + (any_seeds() ? 1 : 0);
    double fixed = top_chrome + bottom_chrome(reserved_notes) + static_cast<double>(stacks) * facet_title +
                   static_cast<double>(stacks - 1) * stack_gap;
    double weights = 0;
    for (const Draft& d : drafts_) weights += panel_weight(d.panel.kind);
    fixed += static_cast<double>(drafts_.size() - stacks) * panel_gap;
    const double avail = std::max(static_cast<double>(H_) - fixed, 3.0 * static_cast<double>(drafts_.size()));

    const double plot_left = left_margin;
    const double plot_right = W_ - right_margin;
    double y = top_chrome;
    for (std::size_t i = 0; i < drafts_.size(); ++i) {
      Draft& d = drafts_[i];
      if (d.top_of_stack) {
        if (d.stack > 0) y += stack_gap;
        if (o_.facet) {
          facet_titles_.push_back({d.stack, y + facet_title * 0.55});
          y += facet_title;
        }
      } else {
        y += panel_gap;
      }
      d.plot_top = y;
      d.plot_h = avail * panel_weight(d.panel.kind) / weights;
      d.plot_left = plot_left;
      d.plot_w = std::max(plot_right - plot_left, 1.0);
      y += d.plot_h;
      d.panel.box = Box{plot_left / W_, plot_right / W_, 1.0 - y / H_, 1.0 - d.plot_top / H_};
      d.panel.key = std::any_of(d.panel.series.begin(), d.panel.series.end(),
                                [](const ChartSeries& s) { return !s.title.empty(); });
      d.panel.key_x = (plot_right + (text_ ? 1 : 0.6 * em_)) / W_;
      d.panel.key_y = d.panel.box.top;
    }
    drafts_.back().panel.xtic_labels = true;

    place_labels();
    y_ranges();

    // Canvas labels: title, facet titles, notes.
    if (has_title) {
      ChartLabel l;
      l.text = display_text(title_text(), static_cast<std::size_t>(std::max(10.0, (W_ - 2 * em_) / char_w(0.62))));
      l.kind = LabelKind::title;
      l.coords = ChartLabel::Coords::screen;
      l.x = 0.5;
      l.y = 1.0 - (text_ ? 0.5 : 0.95 * line_) / H_;
      l.center = true;
      chart_.canvas_labels.push_back(std::move(l));
    }
    for (const auto& [stack, yy] : facet_titles_) {
      const TraceInput& t = traces_[stack];
      std::string text = t.label;
      if (!t.data->cmdline.empty()) text += " — " + t.data->cmdline;
      ChartLabel l;
      l.text = display_text(text, static_cast<std::size_t>(std::max(10.0, (plot_right - plot_left) / char_w(0.62))));
      l.kind = LabelKind::facet;
      l.color = palette_slot(stack);
      l.coords = ChartLabel::Coords::screen;
      l.x = plot_left / W_;
      l.y = 1.0 - yy / H_;
      chart_.canvas_labels.push_back(std::move(l));
    }
    const double xlabel_y = y + (text_ ? 1.5 : 2.1 * line_);
    double note_y = xlabel_y + (text_ ? 1 : 1.2 * line_);
    for (const std::string& n : chart_.notes) {
      ChartLabel l;
      l.text = display_text(n, static_cast<std::size_t>(std::max(10.0, (W_ - 2 * em_) / char_w(0.55))));
      l.kind = LabelKind::note;
      l.coords = ChartLabel::Coords::screen;
      l.x = (text_ ? 0 : 0.6 * em_) / W_;
      l.y = std::max(0.0, 1.0 - note_y / H_);
      chart_.canvas_labels.push_back(std::move(l));
      note_y += text_ ? 1 : 1.15 * line_;
    }
    for (Draft& d : drafts_) chart_.panels.push_back(std::move(d.panel));
  }

  double lane_h() const { return text_ ? 1.0 : 1.2 * line_; }

  // Width of an average character: `ems` of the font, or one cell of a text chart.
  double char_w(double ems) const { return text_ ? 1.0 : ems * em_; }

  bool any_seeds() const {
    return std::any_of(drafts_.begin(), drafts_.end(), [](const Draft& d) { return !d.seeds.empty(); });
  }

  std::string title_text() const {
    if (!o_.title.empty()) return o_.title;
    if (traces_.size() == 1 && !o_.facet) {
      return traces_[0].data->cmdline.empty() ? traces_[0].label : traces_[0].data->cmdline;
    }
    return {};
  }

  double px(const Draft& d, double x) const { return d.plot_left + (x - xmin_) / (xmax_ - xmin_) * d.plot_w; }

  void place_labels() {
    std::size_t dropped = 0, shortened = 0;
    for (Draft& d : drafts_) {
      if (d.seeds.empty()) continue;
      // Stages first (the wide bands), then the end of the command, then checkpoints, by time.
      std::stable_sort(d.seeds.begin(), d.seeds.end(), [](const LabelSeed& a, const LabelSeed& b) {
        const auto rank = [](LabelKind k) { return k == LabelKind::stage ? 0 : k == LabelKind::exit ? 1 : 2; };
        if (rank(a.kind) != rank(b.kind)) return rank(a.kind) < rank(b.kind);
        return a.x0 < b.x0;
      });
      const double pad = text_ ? 1 : 0.35 * em_;
      std::vector<LabelItem> items;
      for (const LabelSeed& s : d.seeds) items.push_back({s.text, px(d, s.x0) + pad, px(d, s.x1) - pad});
      LabelArea area;
      area.left = d.plot_left + (text_ ? 1 : 0.2 * em_);
      area.right = d.plot_left + d.plot_w - (text_ ? 1 : 0.2 * em_);
      area.em = em_;
      area.monospace = text_;
      area.gap = text_ ? 2 : 0.8 * em_;
      area.max_rows = std::clamp(static_cast<int>((d.plot_h * 0.3 - d.lanes * lane_h()) / line_), 1, text_ ? 3 : 5);
      d.layout = layout_labels(items, area);
      dropped += d.layout.dropped;
      shortened += d.layout.shortened;
    }
    if (dropped > 0) {
      note(std::to_string(dropped) + (dropped == 1 ? " label" : " labels") +
           " of checkpoints or stages left out where they were too close together; --window shows a part of the run");
    }
    (void)shortened;
  }

  void y_ranges() {
    // Headroom for the label rows and the peak's text, as a fraction of each panel's height;
    // panels of one kind share their y range (facets compare at a glance).
    std::map<int, double> data_max, frac;
    for (Draft& d : drafts_) {
      const int k = static_cast<int>(d.panel.kind);
      double reserved = d.top_of_stack && !text_ ? 0.3 * line_ : 0.0;
      reserved += d.lanes * lane_h();
      if (d.layout.rows > 0) reserved += d.layout.rows * line_ + (text_ ? 0 : 0.2 * line_);
      if (d.peak) reserved += text_ ? 2.0 : 1.4 * line_;
      else if (!d.panel.points.empty()) reserved += text_ ? 1.0 : 0.6 * line_;  // the peaks' marks
      double f = std::min(reserved / std::max(d.plot_h, 1.0), 0.6);
      if (d.panel.kind != Panel::memory && f < 0.07) f = 0.07;
      if (d.panel.kind == Panel::memory && f < 0.05) f = 0.05;
      data_max[k] = std::max(data_max[k], d.data_max);
      frac[k] = std::max(frac[k], f);
    }
    for (Draft& d : drafts_) {
      const int k = static_cast<int>(d.panel.kind);
      double top = data_max[k] > 0 ? data_max[k] : 1.0;
      d.panel.ymin = 0;
      d.panel.ymax = top / (1.0 - frac[k]);

      // Stage lanes (overlays), then label rows, from the top of the panel down.
      const double pad = text_ ? 0 : 0.3 * line_;
      for (const Draft::LaneStage& ls : d.lane_stages) {
        const double top_px = pad + ls.lane * lane_h();
        const double bar_h = lane_h() - (text_ ? 0 : 0.2 * line_);
        const LabelSeed& s = ls.seed;
        if (!text_) {
          d.panel.bands.push_back(ChartBand{s.x0, s.x1, ls.shade, s.color, 1.0 - (top_px + bar_h) / d.plot_h,
                                            1.0 - top_px / d.plot_h});
        }
        // The stage's name inside its bar, shortened to fit, or not at all.
        const double room = px(d, s.x1) - px(d, s.x0) - (text_ ? 1 : 0.7 * em_);
        const std::size_t fit = static_cast<std::size_t>(std::max(0.0, room / char_w(0.66)));
        if (fit < 3) continue;
        ChartLabel l;
        l.text = display_text(s.text, fit);
        if (text_width_px(l.text, em_, text_) > room) l.text = display_text(s.text, fit * 3 / 4);
        if (l.text.size() < 2) continue;
        l.kind = LabelKind::stage;
        l.color = s.color;
        l.coords = ChartLabel::Coords::first_graph;
        l.x = s.x0;
        l.dx_em = text_ ? 0 : 0.35;
        l.y = 1.0 - (top_px + (text_ ? 1.0 : bar_h / 2)) / d.plot_h;
        d.panel.labels.push_back(std::move(l));
      }
      const double rows_top = pad + d.lanes * lane_h();
      for (const PlacedLabel& p : d.layout.placed) {
        const LabelSeed& s = d.seeds[p.item];
        ChartLabel l;
        l.text = p.text;
        l.kind = s.kind;
        l.color = s.color;
        l.coords = ChartLabel::Coords::first_graph;
        const double pad_x = text_ ? 1 : 0.35 * em_;
        l.right = p.right_aligned;
        l.x = p.right_aligned ? s.x1 : s.x0;
        l.dx_em = (p.right_aligned ? -pad_x : pad_x) / em_;
        l.y = 1.0 - (rows_top + (p.row + (text_ ? 1.0 : 0.5)) * line_) / d.plot_h;
        d.panel.labels.push_back(std::move(l));
      }
      if (d.peak) {
        d.panel.points.push_back(*d.peak);
        ChartLabel l;
        l.text = d.peak_text;
        l.kind = LabelKind::peak;
        l.coords = ChartLabel::Coords::first_first;
        l.x = d.peak->x;
        l.y = d.peak->y;
        const double w = text_width_px(l.text, em_, text_);
        const double off = text_ ? 1 : 0.7 * em_;
        l.right = px(d, d.peak->x) + off + w > d.plot_left + d.plot_w;
        l.dx_em = (l.right ? -off : off) / em_;
        l.dy_em = text_ ? 1 : 0.75 * line_ / em_;
        d.panel.labels.push_back(std::move(l));
      }
    }
  }

  void time_axis() {
    const double span = xmax_ - xmin_;
    // Tic steps keep labels about 7 ems apart.
    const double plot_w = chart_.panels.empty() ? W_ : (chart_.panels[0].box.right - chart_.panels[0].box.left) * W_;
    const double max_tics = std::max(2.0, plot_w / ((text_ ? 8 : 6.5) * em_));
    const auto pick = [&](std::initializer_list<double> steps) {
      for (double s : steps) {
        if (span / s <= max_tics) return s;
      }
      return *(steps.end() - 1) * std::ceil(span / max_tics / *(steps.end() - 1));
    };
    if (xmax_ <= 600) {
      chart_.time_format = TimeFormat::seconds;
      chart_.xlabel = "time from start (s)";
    } else if (xmax_ <= 2 * 3600) {  // as human_seconds: minutes up to 2 h
      chart_.time_format = TimeFormat::minutes;
      chart_.xtic_step = pick({30, 60, 120, 300, 600, 900, 1200, 1800, 3600});
      chart_.xlabel = "time from start (min:s)";
    } else {
      chart_.time_format = TimeFormat::hours;
      chart_.xtic_step = pick({600, 1200, 1800, 3600, 7200, 10800, 21600, 43200, 86400});
      chart_.xlabel = "time from start (h:min)";
    }
  }

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

}  // namespace

std::vector<Panel> resolve_panels(const std::vector<TraceInput>& traces, const PlotOptions& options) {
  const auto has = [&](Panel p) {
    for (const TraceInput& t : traces) {
      const TraceData& d = *t.data;
      switch (p) {
        case Panel::memory: return true;
        case Panel::gpu:
          for (const GpuDeviceData& g : d.gpus) {
            if (!g.tree.empty() || !g.used.empty()) return true;
          }
          break;
        case Panel::cpu:
          if (d.cpu.envelope().count() + (d.cpu.last_points().size() > 1 ? 1 : 0) > 1) return true;
          break;
        case Panel::io:
          if (d.io_read.envelope().count() > 1 || d.io_write.envelope().count() > 1) return true;
          break;
      }
    }
    return false;
  };
  std::vector<Panel> out;
  if (options.panels.empty()) {
    out.push_back(Panel::memory);
    if (has(Panel::gpu)) out.push_back(Panel::gpu);
    return out;
  }
  for (Panel p : options.panels) {
    if (std::find(out.begin(), out.end(), p) != out.end()) continue;
    if (has(p)) {
      out.push_back(p);
    } else if (options.warn) {
      options.warn("no " + std::string(panel_name(p)) + " samples in " + (traces.size() == 1 ? "the trace" : "any trace") +
                   ": the " + std::string(panel_name(p)) + " panel is left out");
    }
  }
  if (out.empty()) out.push_back(Panel::memory);
  return out;
}

std::pair<int, int> default_size(const std::vector<Panel>& panels, std::size_t stacks) {
  double h = 160;  // title, time axis, notes: one memory panel makes 1280×720
  for (std::size_t s = 0; s < std::max<std::size_t>(stacks, 1); ++s) {
    for (Panel p : panels) h += panel_weight(p) * (stacks > 1 ? 320 : 540) + 20;
    if (stacks > 1) h += 30;
  }
  return {1280, static_cast<int>(std::clamp(h, 480.0, 4000.0))};
}

Chart build_chart(const std::vector<TraceInput>& traces, const PlotOptions& options, Format format, int width,
                  int height) {
  return Builder(traces, options, format, width, height).build();
}

}  // namespace qprof::plot
