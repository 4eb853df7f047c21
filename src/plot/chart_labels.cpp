// SPDX-License-Identifier: Apache-2.0
// Labels: checkpoints, stages, the peak and the title, placed in rows without overlap.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include "chart_builder.hpp"
#include "qprof/common/units.hpp"
#include "qprof/plot/escape.hpp"
#include "qprof/plot/labels.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::plot::chart_detail {
using trace::Stage;

// Stages, checkpoints and the end of a killed command, in every panel; labels only on top.
void Builder::annotations(Draft& d, const std::vector<TraceInput>& in) {
  const bool single = in.size() == 1;
  for (const TraceInput& ti : in) {
    const TraceData& t = *ti.data;
    const int color = single ? 0 : trace_color(ti);
    int shade = 0;
    // Where each of this trace's lanes ends, and its next shade: a stage that starts before the
    // end of every lane (a job's stages, each the span of its ranks', or nested ones) takes a
    // lane of its own, so that no two bars, nor their names, lie on each other.
    std::vector<double> lane_ends;
    std::vector<int> lane_shades;
    const int first_lane = d.lanes;
    std::size_t drawn = 0, left_out = 0;
    for (const Stage& s : t.stages) {
      const double x0 = std::max(s.t_start, xmin_), x1 = std::min(s.t_end, xmax_);
      if (x1 < x0) continue;
      // Each stage is a gnuplot object: 300 000 of them outran the render timeout.
      if (drawn == kMaxStageBands) {
        ++left_out;
        continue;
      }
      ++drawn;
      std::string name = display_text(s.name, 60) + (s.closed ? "" : " (no End)");
      if (single) {
        d.panel.bands.push_back(ChartBand{x0, x1, shade, 0, 0, 1});
        if (d.top_of_stack) d.seeds.push_back({std::move(name), LabelKind::stage, 0, x0, x1});
      } else if (d.top_of_stack) {
        std::size_t j = 0;
        while (j < lane_ends.size() && lane_ends[j] > x0) ++j;
        if (j == lane_ends.size() && lane_ends.size() == kMaxLanesPerTrace) {
          // Past the last lane: the one free soonest (the chart keeps its room for the data).
          j = static_cast<std::size_t>(std::min_element(lane_ends.begin(), lane_ends.end()) - lane_ends.begin());
        } else if (j == lane_ends.size()) {
          lane_ends.push_back(x1);
          lane_shades.push_back(0);
          ++d.lanes;
        }
        lane_ends[j] = std::max(lane_ends[j], x1);
        d.lane_stages.push_back(
            {first_lane + static_cast<int>(j), lane_shades[j], {std::move(name), LabelKind::stage, color, x0, x1}});
        lane_shades[j] ^= 1;
      }
      shade ^= 1;
    }
    if (left_out > 0 && d.top_of_stack) {
      note(ti.label + ": " + std::to_string(left_out) + " stages beyond the first " + std::to_string(kMaxStageBands) +
           " are not drawn; --window shows a part of the run");
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

bool Builder::any_seeds() const {
  return std::any_of(drafts_.begin(), drafts_.end(), [](const Draft& d) { return !d.seeds.empty(); });
}

std::string Builder::title_text() const {
  if (!o_.title.empty()) return o_.title;
  if (traces_.size() == 1 && !o_.facet) {
    return traces_[0].data->cmdline.empty() ? traces_[0].label : traces_[0].data->cmdline;
  }
  return {};
}

void Builder::place_labels() {
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

}  // namespace qprof::plot::chart_detail
