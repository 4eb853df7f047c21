// SPDX-License-Identifier: Apache-2.0
// What each panel draws: the tree's memory, children, exact peaks, GPU, CPU and I/O series.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include "chart_builder.hpp"
#include "qprof/analysis/metric_table.hpp"
#include "qprof/common/units.hpp"
#include "qprof/plot/escape.hpp"
#include "qprof/plot/labels.hpp"
#include "qprof/plot/off_chart.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::plot::chart_detail {
using trace::TorchSample;

// The program of a shell-quoted command line: "python3" of "/usr/bin/python3 -c '…'".
std::string command_name(std::string_view cmdline) {
  std::string_view first = cmdline.substr(0, cmdline.find(' '));
  if (const auto slash = first.rfind('/'); slash != std::string_view::npos) first.remove_prefix(slash + 1);
  return first.empty() ? "root" : std::string(first);
}

// The row's chart title; Σ RSS's for a name no row has (plot checked --metric before).
std::string metric_title(const std::string& metric) {
  using analysis::metric_row;
  if (metric.rfind("dir:", 0) == 0) {
    return std::string(metric_row(analysis::MetricKind::dir).chart_title) + " " + display_text(metric.substr(4), 40);
  }
  const analysis::MetricRow* row = analysis::metric_row_named(metric);
  return std::string((row ? *row : metric_row(analysis::MetricKind::rss)).chart_title);
}

namespace {

// The upper quartile of the time between consecutive points: the schedule a series was read on.
// Readings a checkpoint or a new high asked for fall between scheduled ones and shorten some
// intervals; a stall lengthens a few; most of the longer ones are the schedule.
std::optional<double> schedule_of(const std::vector<Point>& pts) {
  std::vector<double> steps;
  for (std::size_t i = 1; i < pts.size(); ++i) {
    if (pts[i].t > pts[i - 1].t) steps.push_back(pts[i].t - pts[i - 1].t);
  }
  if (steps.empty()) return std::nullopt;
  const std::size_t q = steps.size() * 3 / 4;
  std::nth_element(steps.begin(), steps.begin() + static_cast<std::ptrdiff_t>(q), steps.end());
  return steps[q];
}

// A reading further than this many schedules from the last is after a gap: no line across it.
constexpr double kGapSchedules = 2.0;
// Sparser than the samples by this factor, a series is drawn as readings.
constexpr double kSparse = 1.5;
// Points are drawn where the readings lie at least this many pixels (or text cells) apart on
// average: closer, they would merge into a thick line.
constexpr double kPointSpacing = 6.0;

}  // namespace

ChartSeries Builder::readings(ChartSeries s, const TraceData& t) const {
  const auto own = schedule_of(s.data);
  const auto samples = schedule_of(t.mem.points());
  if (!own || (samples && *own <= kSparse * *samples)) return s;
  // What the chart shows are a grid's buckets: a gap narrower than two of them cannot be told
  // from the grid's own spacing (the first reading of one bucket, the last of the next).
  const double bucket = t.grid ? t.grid->width() : 0.0;
  s.gap = kGapSchedules * std::max(*own, bucket);
  const double span = xmax_ - xmin_;
  s.marks = span > 0 && *own / span * W_ >= (text_ ? kPointSpacing / 1.5 : kPointSpacing);
  return s;
}

void Builder::add_series(Draft& d, ChartSeries s) {
  d.data_max = std::max(d.data_max, max_of(s.data, xmin_, xmax_));
  d.panel.series.push_back(std::move(s));
}

void Builder::hline(Draft& d, Role role, int color, double y, std::string title) {
  ChartSeries s;
  s.role = role;
  s.color = color;
  s.dashed = true;
  s.title = std::move(title);
  s.data = {{xmin_, y}, {xmax_, y}};
  add_series(d, std::move(s));
}

void Builder::memory_panel(Draft& d, const std::vector<TraceInput>& in) {
  const double unit = unit_bytes(units_.memory);
  d.panel.ylabel = "memory (" + std::string(unit_name(units_.memory)) + ")";
  const bool single = in.size() == 1;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const TraceData& t = *in[i].data;
    const int color = single ? 0 : trace_color(in[i]);
    // --metric: the series drawn as the trace's line (checked to exist before the chart is built).
    const Series* chosen = metric_series_of(t, o_.metric);
    const bool rss = o_.metric == "rss" || !chosen;
    const Series& main = rss ? t.mem : *chosen;
    const Point peak = main.envelope().max();
    const std::string peak_text = bytes_text(peak.v, units_.chosen) + " at " + human_seconds(peak.t);

    if (o_.children) children(d, in[i], single, unit);
    if (single && (rss || o_.metric == "footprint")) {
      one_trace_memory(d, in[i], main, unit);
      d.peak = ChartPoint{peak.t, peak.v / unit, 0};
      d.peak_text = "peak " + peak_text;
    } else if (single) {
      add_series(d, readings({Role::tree, 0, false, false, metric_title(o_.metric) + ", peak " + peak_text,
                              scaled(main.points(), unit)},
                             t));
      trend_lines(d, in[i], 0, unit);
      d.peak = ChartPoint{peak.t, peak.v / unit, 0};
      d.peak_text = "peak " + peak_text;
    } else {
      std::string title =
          display_text(in[i].label, 40) + ", " + (rss ? "" : metric_title(o_.metric) + " ") + "peak " + peak_text;
      if (auto it = t.peaks.find(std::string(trace::kPeakCgroup)); it != t.peaks.end()) {
        const double mark = static_cast<double>(it->second);
        if (rss) {
          title += " (cgroup charge " + bytes_text(mark, units_.chosen) + ")";
        } else if (chosen == &t.cgroup && mark > peak.v) {
          // The kernel's high-water mark above every sample (a job's: a rank's spike between its
          // samples): the peak the reports give, said beside the drawn one.
          title += "; " + bytes_text(mark, units_.chosen) + " between samples";
        }
      }
      ChartSeries line{Role::trace, color, in[i].faint, false, title, scaled(main.points(), unit)};
      add_series(d, rss ? std::move(line) : readings(std::move(line), t));
      trend_lines(d, in[i], color, unit);
      if (!in[i].faint) d.panel.points.push_back(ChartPoint{peak.t, peak.v / unit, color});
    }
  }
}

// One trace in detail. Filled, with the peak annotated: `main`, the footprint (shared pages once:
// the tree's cgroup charge, else Σ PSS) or, with --metric rss or where the trace has none, Σ RSS;
// the other memory figures as lines, Σ RSS beside a footprint as a thin one named as mprof's.
void Builder::one_trace_memory(Draft& d, const TraceInput& in, const Series& main, double unit) {
  const TraceData& t = *in.data;
  const bool footprint = &main != &t.mem;
  const std::string main_peak = bytes_text(main.envelope().max().v, units_.chosen);
  if (footprint) {
    add_series(d, readings({Role::tree, 0, false, false,
                            std::string(&main == &t.cgroup ? "footprint (cgroup charge)" : "footprint (Σ PSS)") +
                                ", peak " + main_peak,
                            scaled(main.points(), unit)},
                           t));
  } else if (!t.cgroup.empty()) {
    add_series(
        d, readings({Role::cgroup, 0, false, false, "footprint: cgroup charge", scaled(t.cgroup.points(), unit)}, t));
  }
  if (!t.pss.empty()) {
    // Where the tree had no cgroup of its own, Σ PSS is the footprint: drawn once.
    if (&main != &t.pss) {
      add_series(
          d, readings({Role::pss, 0, false, false, t.cgroup.empty() ? "footprint: PSS of the tree" : "PSS of the tree",
                       scaled(t.pss.points(), unit)},
                      t));
    }
    add_series(d, readings({Role::uss, 0, false, false, "USS of the tree", scaled(t.uss.points(), unit)}, t));
  }
  const Point rss_max = t.mem.envelope().max();
  const std::string rss_peak = bytes_text(rss_max.v, units_.chosen) + " at " + human_seconds(rss_max.t);
  if (footprint) {
    // mprof's figure, a page shared by N processes counted N times: a line, not the answer.
    add_series(
        d, {Role::rss_sum, 0, false, false, "Σ RSS (mprof's figure), peak " + rss_peak, scaled(t.mem.points(), unit)});
  } else {
    // mprof's MEM is the tree only with -C ("include children"): say no more than it knows.
    add_series(d, {Role::tree, 0, false, false, (t.qprof ? "tree " : "") + metric_name(t) + ", peak " + rss_peak,
                   scaled(t.mem.points(), unit)});
  }
  // A note under a facet chart names its panel: sixteen lines tied to none read as one run's.
  const std::string panel = o_.facet ? display_text(in.label, 24) + ": " : "";
  exact_peaks(d, t, 0, unit, panel);
  limit_line(d, t, unit, panel);
  trend_lines(d, in, 0, unit);
}

void Builder::children(Draft& d, const TraceInput& in, bool single, double unit) {
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
  const std::size_t total = order.size() + t.other_children_count;
  if (shown < total) {
    note(in.label + ": the " + std::to_string(shown) + " processes with the highest peaks of " + std::to_string(total) +
         " are drawn" +
         (t.other_children_count > 0
              ? "; " + std::to_string(t.other_children_count) + " beyond the " + std::to_string(kMaxSeriesPerKind) +
                    " kept one by one are drawn as one envelope"
              : std::string()));
  }
  for (std::size_t k = 0; k < shown; ++k) {
    const ChildData& c = *order[k];
    ChartSeries s;
    s.role = Role::child;
    s.data = scaled(c.mem.points(), unit);
    if (single) {
      s.color = palette_slot(k + 1);
      // Named "python3 (2920)" by the trace's PROC lines; the root without one by its command.
      const bool is_root = t.root_line && &c == &t.children.front();
      std::string name = !c.name.empty() ? display_text(c.name, 24) + " (" + std::to_string(c.pid) + ")"
                         : is_root ? display_text(command_name(t.cmdline), 24) + " (" + std::to_string(c.pid) + ")"
                                   : "pid " + std::to_string(c.pid);
      if (is_root) name += ", root";
      s.title = name + ", peak " + bytes_text(c.mem.envelope().max().v, units_.chosen);
    } else {
      s.color = trace_color(in);
      s.dashed = true;
      if (k == 0) s.title = display_text(in.label, 40) + ": " + std::to_string(order.size()) + " processes";
    }
    add_series(d, std::move(s));
  }
  if (!t.other_children.empty()) {
    ChartSeries s;
    s.role = Role::child;
    s.color = trace_color(in);
    s.dashed = true;
    s.data = scaled(t.other_children.points(), unit);
    s.title = display_text(in.label, 40) + ": " + std::to_string(t.other_children_count) +
              " other processes, their lowest to highest";
    add_series(d, std::move(s));
  }
}

void Builder::exact_peaks(Draft& d, const TraceData& t, int color, double unit, const std::string& panel) {
  struct Kind {
    std::string_view name;
    Role role;
    const char* title;
  };
  static const Kind kinds[] = {
      {trace::kPeakCgroup, Role::peak_cgroup, "cgroup charge peak (includes page cache): "},
      {trace::kPeakKernelProcess, Role::peak_kernel, "largest process, kernel peak (lower bound): "},
      {trace::kPeakHwmSum, Role::peak_hwm, "sum of VmHWM (upper bound): "},
  };
  // The axis fits the drawn series: a figure far above them (Σ VmHWM of workers that never
  // coexisted) is written in a note under the chart instead of stretching the axis (a legend
  // entry would be shortened to the key's width and lose the figure).
  const double drawn = d.data_max;
  for (const Kind& k : kinds) {
    auto it = t.peaks.find(std::string(k.name));
    if (it == t.peaks.end()) continue;
    const double b = static_cast<double>(it->second);
    if (off_chart(b / unit, drawn)) {
      // An upper bound that far above what was drawn bounds nothing (workers that never
      // coexisted): left out, as the run's summary leaves it out.
      if (k.role != Role::peak_hwm) note(panel + k.title + bytes_text(b, units_.chosen) + " (off the chart)");
      continue;
    }
    hline(d, k.role, color, b / unit, k.title + bytes_text(b, units_.chosen));
  }
}

void Builder::gpu_panel(Draft& d, const std::vector<TraceInput>& in) {
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
          add_series(d, readings({Role::gpu_tree, color, false, false,
                                  gpu + ": tree, peak " + bytes_text(g.tree.envelope().max().v, units_.chosen),
                                  scaled(g.tree.points(), unit)},
                                 t));
        }
        if (!g.used.empty() && g.used.envelope().max().v > 0) {  // 0: the backend cannot tell
          std::string title = gpu + ": device in use";
          if (g.info.total > 0) title += " of " + bytes_text(static_cast<double>(g.info.total), units_.chosen);
          if (!g.info.name.empty()) title += " (" + display_text(g.info.name, 32) + ")";
          add_series(
              d, readings({Role::gpu_used, color, true, false, std::move(title), scaled(g.used.points(), unit)}, t));
        }
      }
      if (t.gpus_left_out > 0) {
        note(ti.label + ": " + std::to_string(t.gpus_left_out) + " devices beyond the first " +
             std::to_string(kMaxSeriesPerKind) + " are not drawn one by one");
      }
      torch_series(d, t, unit);
    } else if (!t.gpu_total.empty()) {
      add_series(d, readings({Role::gpu_tree, trace_color(ti), false, false,
                              display_text(ti.label, 40) + ", peak " +
                                  bytes_text(t.gpu_total.envelope().max().v, units_.chosen),
                              scaled(t.gpu_total.points(), unit)},
                             t));
    }
  }
}

// torch's own figures beside the driver's: the gap between reserved and the driver's is the CUDA
// context, between allocated and reserved the caching allocator's cache.
void Builder::torch_series(Draft& d, const TraceData& t, double unit) {
  std::map<int, std::pair<std::vector<Point>, std::vector<Point>>> by_device;
  for (const TorchSample& s : t.torch) {
    by_device[s.device].first.push_back({s.t, static_cast<double>(s.allocated) / unit});
    by_device[s.device].second.push_back({s.t, static_cast<double>(s.reserved) / unit});
  }
  int slot = 0;
  for (auto& [device, series] : by_device) {
    const std::string name = "torch cuda:" + std::to_string(device);
    const int color = palette_slot(static_cast<std::size_t>(slot++));
    add_series(d, {Role::torch_reserved, color, true, true, name + " reserved", std::move(series.second)});
    add_series(d, {Role::torch_allocated, color, false, true, name + " allocated", std::move(series.first)});
  }
}

void Builder::cpu_panel(Draft& d, const std::vector<TraceInput>& in) {
  d.panel.ylabel = "CPU (% of one core)";
  const bool single = in.size() == 1;
  for (const TraceInput& ti : in) {
    std::vector<Point> r = rates(ti.data->cpu.last_points(), 100.0);
    if (r.empty()) continue;
    // Read on the stats schedule: no step held across a stretch without a reading.
    add_series(d, readings({single ? Role::cpu : Role::trace, single ? 0 : trace_color(ti), false, true,
                            single ? "CPU of the tree" : display_text(ti.label, 40), std::move(r)},
                           *ti.data));
  }
  d.data_max = std::max(d.data_max, 100.0);
}

void Builder::io_panel(Draft& d, const std::vector<TraceInput>& in) {
  // The unit follows the highest rate of all traces.
  std::vector<std::pair<std::vector<Point>, std::vector<Point>>> rw;
  double top = 0;
  for (const TraceInput& ti : in) {
    rw.emplace_back(rates(ti.data->io_read.last_points(), 1.0), rates(ti.data->io_write.last_points(), 1.0));
    top = std::max({top, max_of(rw.back().first, xmin_, xmax_), max_of(rw.back().second, xmin_, xmax_)});
  }
  const Unit u = o_.unit.value_or(auto_unit(bytes_from_double(top), Unit::KiB));
  const double unit = unit_bytes(u);
  d.panel.ylabel = "I/O (" + std::string(unit_name(u)) + "/s)";
  const bool single = in.size() == 1;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const std::string who = single ? std::string() : display_text(in[i].label, 40) + ": ";
    const int color = single ? 0 : trace_color(in[i]);
    if (!rw[i].first.empty()) {
      add_series(d, readings({single ? Role::io_read : Role::trace, color, false, true, who + "storage read",
                              scaled(rw[i].first, unit)},
                             *in[i].data));
    }
    if (!rw[i].second.empty()) {
      add_series(d, readings({single ? Role::io_write : Role::trace, color, !single, true, who + "storage write",
                              scaled(rw[i].second, unit)},
                             *in[i].data));
    }
  }
}

int Builder::trace_color(const TraceInput& t) const {
  for (std::size_t i = 0; i < traces_.size(); ++i) {
    if (traces_[i].data == t.data) return palette_slot(i);
  }
  return 1;
}

}  // namespace qprof::plot::chart_detail
