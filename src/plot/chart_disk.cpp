// SPDX-License-Identifier: Apache-2.0
// The disk panel (--watch-dir directories: their sizes and their file systems' free space) and
// the memory limit in force as a line of the memory panel.
#include <algorithm>

#include "chart_builder.hpp"
#include "qprof/common/units.hpp"
#include "qprof/plot/escape.hpp"
#include "qprof/plot/off_chart.hpp"

namespace qprof::plot::chart_detail {

void Builder::limit_line(Draft& d, const TraceData& t, double unit, const std::string& panel) {
  const auto it = t.meta.other.find("limit");
  if (it == t.meta.other.end()) return;
  double bytes = 0;
  try {
    bytes = std::stod(it->second);
  } catch (const std::exception&) {
    return;  // not a number: nothing to draw
  }
  if (!(bytes > 0)) return;
  const auto src = t.meta.other.find("limit_source");
  const std::string title = (src == t.meta.other.end() ? std::string("memory") : display_text(src->second, 16)) +
                            " limit " + bytes_text(bytes, units_.chosen);
  // A limit far above the tree (the machine's MemTotal) would flatten the chart: written instead.
  if (off_chart(bytes / unit, d.data_max)) {
    const auto limit_of = [](const TraceInput& in) {
      const auto& m = in.data->meta.other;
      const auto a = m.find("limit"), b = m.find("limit_source");
      return std::pair(a == m.end() ? "" : a->second, b == m.end() ? "" : b->second);
    };
    const bool one_limit = std::all_of(traces_.begin(), traces_.end(),
                                       [&](const TraceInput& in) { return limit_of(in) == limit_of(traces_[0]); });
    note((one_limit ? "" : panel) + title + " (off the chart)");
    return;
  }
  hline(d, Role::limit, 0, bytes / unit, title);
}

void Builder::disk_panel(Draft& d, const std::vector<TraceInput>& in) {
  double top = 0, free_low = 0;
  bool any_free = false;
  for (const TraceInput& ti : in) {
    for (const DirData& w : ti.data->dirs) {
      if (w.apparent.empty()) continue;
      top = std::max(top, w.apparent.envelope().max().v);
      if (!w.fs_free.empty()) {
        const double low = w.fs_free.envelope().min().v;
        free_low = any_free ? std::min(free_low, low) : low;
        any_free = true;
      }
    }
  }
  // Free space is drawn when it shares the sizes' scale (a small or nearly full file system);
  // otherwise the key gives its lowest value.
  const bool draw_free = any_free && !off_chart(free_low, std::max(top, 1.0));
  const Unit u = o_.unit.value_or(auto_unit(bytes_from_double(draw_free ? std::max(top, free_low) : top), Unit::KiB));
  const double unit = unit_bytes(u);
  d.panel.ylabel = "disk (" + std::string(unit_name(u)) + ")";
  const bool single = in.size() == 1;
  std::size_t k = 0;
  for (const TraceInput& ti : in) {
    if (ti.data->dirs_left_out > 0) {
      note(ti.label + ": " + std::to_string(ti.data->dirs_left_out) + " directories beyond the first " +
           std::to_string(kMaxSeriesPerKind) + " are not drawn");
    }
    for (const DirData& w : ti.data->dirs) {
      if (w.apparent.empty()) continue;
      const int color = single ? palette_slot(k++) : trace_color(ti);
      const std::string who =
          (single ? std::string() : display_text(ti.label, 24) + ": ") + display_text(w.info.path, 40);
      std::string title = who + ", peak " + bytes_text(w.apparent.envelope().max().v, units_.chosen);
      if (!w.fs_free.empty() && !draw_free)
        title += " (fs free ≥ " + bytes_text(w.fs_free.envelope().min().v, units_.chosen) + ")";
      add_series(d, {Role::dir_size, color, false, false, std::move(title), scaled(w.apparent.points(), unit)});
      if (draw_free && !w.fs_free.empty()) {
        add_series(d, {Role::dir_free, color, true, false, who + ": free space of its file system",
                       scaled(w.fs_free.points(), unit)});
      }
    }
  }
}

}  // namespace qprof::plot::chart_detail
