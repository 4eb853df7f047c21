// SPDX-License-Identifier: Apache-2.0
// From reduced traces to a Chart: what each panel draws, in which unit, and where every label,
// key and panel goes on the canvas. Geometry is worked out in pixels (characters for text
// charts) so that labels can be kept apart, and handed to gnuplot as fixed margins.
#include "qprof/plot/chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include "chart_builder.hpp"
#include "qprof/common/units.hpp"
#include "qprof/plot/escape.hpp"
#include "qprof/plot/labels.hpp"
#include "qprof/plot/legend_names.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::plot {
using trace::Stage;
using trace::TorchSample;

namespace chart_detail {

int palette_slot(std::size_t i) { return static_cast<int>(i % kPalette) + 1; }

double panel_weight(Panel p) {
  switch (p) {
    case Panel::memory:
      return 1.0;
    case Panel::gpu:
      return 0.6;
    case Panel::cpu:
    case Panel::io:
    case Panel::tasks:
    case Panel::vsz:
    case Panel::gpu_util:
      return 0.4;
    case Panel::memory_kinds:
      return 0.6;
    case Panel::disk:
      return 0.4;
  }
  return 1.0;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

std::string bytes_text(double bytes, const std::optional<Unit>& unit) {
  if (unit) return fmt("%.4g", bytes / unit_bytes(*unit)) + " " + std::string(unit_name(*unit));
  return human_bytes(bytes_from_double(bytes));
}

std::string metric_name(const TraceData& d) {
  if (d.meta.metric == "pss") return "PSS";
  if (d.meta.metric == "uss") return "USS";
  // Beside a footprint, say what Σ RSS counts: a page shared by N processes N times.
  return d.pss.empty() && d.cgroup.empty() ? "RSS" : "RSS sum";
}

std::string signal_name(int sig) {
  switch (sig) {
    case 1:
      return "SIGHUP";
    case 2:
      return "SIGINT";
    case 3:
      return "SIGQUIT";
    case 6:
      return "SIGABRT";
    case 7:
      return "SIGBUS";
    case 9:
      return "SIGKILL";
    case 11:
      return "SIGSEGV";
    case 15:
      return "SIGTERM";
    default:
      return "signal " + std::to_string(sig);
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

Result<Chart> Builder::build() {
  chart_.format = format_;
  chart_.width = W_;
  chart_.height = H_;
  text_ = format_ == Format::text;
  // gnuplot's dumb terminal maps the canvas onto H-1 rows from the first (screen_y): a layout
  // in rows puts a facet's title, a note, on the row it means only in those units.
  if (text_) H_ = std::max(H_ - 1, 1.0);
  em_ = text_ ? 1.0 : std::clamp(W_ / 96.0, 10.0, 18.0);
  line_ = text_ ? 1.0 : em_ * 1.3;
  chart_.em = em_;
  chart_.font_size = format_ == Format::png ? em_ * 0.75 : format_ == Format::pdf ? em_ * 0.75 : em_;

  // Said once, whatever the panels: the memory is Σ RSS because a trace has no footprint.
  if (!o_.metric_fallback.empty()) note(o_.metric_fallback);
  if (Result<void> selected = select_traces(); !selected) return selected.failure();
  x_range();
  choose_units();
  panels_ = resolve_panels(traces_, o_);
  drafts();
  geometry();
  time_axis();
  return std::move(chart_);
}

Result<void> Builder::select_traces() {
  for (const TraceInput& t : all_) {
    if (t.data->mem.envelope().empty()) {
      note(t.label + ": no samples in the time range; not drawn");
    } else {
      traces_.push_back(t);
    }
  }
  if (traces_.empty()) {
    std::string what = all_.size() == 1 ? "the trace has" : "no trace has";
    return Failure{what + " no samples between " + fmt("%g", o_.from.value_or(0)) + " s and " +
                   (o_.to ? fmt("%g", *o_.to) + " s" : std::string("its end")) + " (--window)"};
  }
  return {};
}

void Builder::x_range() {
  // From the start, or from a sample before it (a clock that went back: said as the trace is
  // read), to the last thing recorded: a sample, a checkpoint, or the command's end.
  double begin = 0;
  for (const TraceInput& t : traces_) begin = std::min(begin, t.data->t_begin);
  xmin_ = o_.from.value_or(begin);
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

void Builder::choose_units() {
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
    for (const TorchSample& s : d.torch) gpu = std::max(gpu, static_cast<double>(s.reserved));
  }
  units_.chosen = o_.unit;
  units_.memory = o_.unit.value_or(auto_unit(bytes_from_double(mem)));
  units_.gpu = o_.unit.value_or(auto_unit(bytes_from_double(gpu)));
}

void Builder::drafts() {
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
        case Panel::memory:
          memory_panel(d, in);
          break;
        case Panel::gpu:
          gpu_panel(d, in);
          break;
        case Panel::cpu:
          cpu_panel(d, in);
          break;
        case Panel::io:
          io_panel(d, in);
          break;
        case Panel::memory_kinds:
          memory_kinds_panel(d, in);
          break;
        case Panel::tasks:
          tasks_panel(d, in);
          break;
        case Panel::vsz:
          vsz_panel(d, in);
          break;
        case Panel::gpu_util:
          gpu_util_panel(d, in);
          break;
        case Panel::disk:
          disk_panel(d, in);
          break;
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

}  // namespace chart_detail

using namespace chart_detail;

std::vector<Panel> resolve_panels(const std::vector<TraceInput>& traces, const PlotOptions& options) {
  const auto has = [&](Panel p) {
    for (const TraceInput& t : traces) {
      const TraceData& d = *t.data;
      switch (p) {
        case Panel::memory:
          return true;
        case Panel::gpu:
          for (const GpuDeviceData& g : d.gpus) {
            if (!g.tree.empty() || !g.used.empty()) return true;
          }
          if (!d.torch.empty()) return true;
          break;
        case Panel::cpu:
          if (d.cpu.envelope().count() + (d.cpu.last_points().size() > 1 ? 1 : 0) > 1) return true;
          break;
        case Panel::io:
          if (d.io_read.envelope().count() > 1 || d.io_write.envelope().count() > 1) return true;
          break;
        case Panel::memory_kinds:
          if (!d.stack_shmem.empty() || !d.swap.empty()) return true;
          break;
        case Panel::tasks:
          if (!d.threads.empty()) return true;
          break;
        case Panel::vsz:
          if (!d.vsz.empty()) return true;
          break;
        case Panel::gpu_util:
          if (!d.gpu_util.empty()) return true;
          break;
        case Panel::disk:
          for (const DirData& w : d.dirs) {
            if (!w.apparent.empty()) return true;
          }
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
      options.warn("no " + std::string(panel_name(p)) + " samples in " +
                   (traces.size() == 1 ? "the trace" : "any trace") + ": the " + std::string(panel_name(p)) +
                   " panel is left out");
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

Result<Chart> build_chart(const std::vector<TraceInput>& traces, const PlotOptions& options, Format format, int width,
                          int height) {
  // Overlaid or faceted traces are named in the key by what tells them apart: about what one key
  // line holds (a text chart's key is a third of its columns).
  std::vector<TraceInput> named = traces;
  if (named.size() > 1) {
    std::vector<std::string> labels;
    for (const TraceInput& t : named) labels.push_back(t.label);
    const std::size_t max_chars =
        format == Format::text ? static_cast<std::size_t>(std::max(12.0, width * 0.34 - 10)) : 40;
    const std::vector<std::string> names = legend_names(labels, max_chars);
    for (std::size_t i = 0; i < named.size(); ++i) named[i].label = names[i];
  }
  return Builder(named, options, format, width, height).build();
}

}  // namespace qprof::plot
