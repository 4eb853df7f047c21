// SPDX-License-Identifier: Apache-2.0
// The panels of the series beyond memory and CPU: the tree's RSS by kind (stacked), its task
// counts, its virtual size, and how busy its GPUs were.
#include <algorithm>

#include "chart_builder.hpp"
#include "qprof/common/units.hpp"
#include "qprof/plot/escape.hpp"

namespace qprof::plot::chart_detail {

namespace {

ChartSeries series(Role role, int color, bool dashed, bool steps, bool filled, std::string title,
                   std::vector<Point> data) {
  ChartSeries s{role, color, dashed, steps, std::move(title), std::move(data)};
  s.filled = filled;
  return s;
}

double series_max(const Series& s) { return s.empty() ? 0.0 : s.envelope().max().v; }

}  // namespace

void Builder::memory_kinds_panel(Draft& d, const std::vector<TraceInput>& in) {
  const bool single = in.size() == 1;
  double top = 0;
  for (const TraceInput& ti : in) top = std::max({top, series_max(ti.data->stack_shmem), series_max(ti.data->swap)});
  const Unit u = o_.unit.value_or(auto_unit(bytes_from_double(top)));
  const double unit = unit_bytes(u);
  d.panel.ylabel = "RSS by kind (" + std::string(unit_name(u)) + ")";
  for (const TraceInput& ti : in) {
    const TraceData& t = *ti.data;
    if (t.stack_shmem.empty()) continue;
    if (single) {
      // Cumulative curves, largest first: each opaque area covers the next, so the visible band
      // between two curves is one kind. Each kind's own peak in its title.
      const auto title = [&](const char* kind, const Series& own) {
        return std::string(kind) + ", peak " + bytes_text(series_max(own), units_.chosen);
      };
      add_series(
          d, series(Role::trace, 3, false, false, true, title("shmem", t.shmem), scaled(t.stack_shmem.points(), unit)));
      add_series(d, series(Role::trace, 2, false, false, true, title("file-backed", t.file),
                           scaled(t.stack_file.points(), unit)));
      add_series(d, series(Role::trace, 1, false, false, true, title("anon", t.anon), scaled(t.anon.points(), unit)));
      if (series_max(t.swap) > 0) {
        add_series(
            d, series(Role::trace, 4, true, false, false, title("swapped out", t.swap), scaled(t.swap.points(), unit)));
      }
    } else {
      // Overlays: each trace's anon (solid) and file-backed (dashed) lines in its colour.
      const std::string who = display_text(ti.label, 40);
      add_series(d, readings(series(Role::trace, trace_color(ti), false, false, false, who + ": anon",
                                    scaled(t.anon.points(), unit)),
                             t));
      add_series(d, readings(series(Role::trace, trace_color(ti), true, false, false, who + ": file",
                                    scaled(t.file.points(), unit)),
                             t));
    }
  }
}

void Builder::tasks_panel(Draft& d, const std::vector<TraceInput>& in) {
  d.panel.ylabel = "tasks";
  const bool single = in.size() == 1;
  for (const TraceInput& ti : in) {
    const TraceData& t = *ti.data;
    if (t.threads.empty()) continue;
    const std::string who = single ? std::string() : display_text(ti.label, 40) + ": ";
    const auto peak = [](const Series& s) { return fmt("%.0f", series_max(s)); };
    // Read on the stats schedule, as the other usage series: no step across a gap.
    add_series(d, readings(series(Role::trace, single ? 1 : trace_color(ti), false, true, false,
                                  who + "threads, at most " + peak(t.threads), t.threads.points()),
                           t));
    add_series(d, readings(series(Role::trace, single ? 2 : trace_color(ti), true, true, false,
                                  who + "processes, at most " + peak(t.processes), t.processes.points()),
                           t));
  }
  d.data_max = std::max(d.data_max, 1.0);
}

void Builder::vsz_panel(Draft& d, const std::vector<TraceInput>& in) {
  double top = 0;
  for (const TraceInput& ti : in) top = std::max(top, series_max(ti.data->vsz));
  const Unit u = o_.unit.value_or(auto_unit(bytes_from_double(top)));
  d.panel.ylabel = "VSZ (" + std::string(unit_name(u)) + ")";
  const bool single = in.size() == 1;
  for (const TraceInput& ti : in) {
    const TraceData& t = *ti.data;
    if (t.vsz.empty()) continue;
    add_series(d, readings(series(Role::trace, single ? 5 : trace_color(ti), false, false, false,
                                  (single ? std::string("virtual size of the tree") : display_text(ti.label, 40)) +
                                      ", peak " + bytes_text(series_max(t.vsz), units_.chosen),
                                  scaled(t.vsz.points(), unit_bytes(u))),
                           t));
  }
}

void Builder::gpu_util_panel(Draft& d, const std::vector<TraceInput>& in) {
  d.panel.ylabel = "GPU busy (%)";
  const bool single = in.size() == 1;
  for (const TraceInput& ti : in) {
    const TraceData& t = *ti.data;
    for (std::size_t k = 0; k < t.gpu_util.size(); ++k) {
      const GpuUtilData& g = t.gpu_util[k];
      const std::string who =
          (single ? std::string() : display_text(ti.label, 32) + ": ") + "GPU" + std::to_string(g.device);
      const int color = single ? palette_slot(k) : trace_color(ti);
      add_series(d, readings(series(Role::trace, color, false, false, false, who + " busy", g.busy.points()), t));
      if (!g.tree_busy.empty()) {
        add_series(d, readings(series(Role::child, color, true, false, false, who + " busy, the tree's share",
                                      g.tree_busy.points()),
                               t));
      }
      if (single) {
        add_series(
            d,
            readings(series(Role::child, color, false, false, false, who + " memory bandwidth", g.mem_bw.points()), t));
      }
    }
  }
  d.data_max = std::max(d.data_max, 100.0);
}

}  // namespace qprof::plot::chart_detail
