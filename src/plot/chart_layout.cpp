// SPDX-License-Identifier: Apache-2.0
// The canvas: panel geometry and margins, y ranges and tics, the time axis.
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

namespace qprof::plot::chart_detail {

// Width in pixels of the y tic labels of an axis reaching `ymax`.
double Builder::tic_label_width(double ymax) const {
  const double rounded = std::abs(ymax) < 1e-300 ? 1 : ymax;
  const std::string s = fmt("%.2g", rounded);
  std::size_t chars =
      s.find('e') != std::string::npos ? 7 : std::max<std::size_t>(fmt("%.0f", rounded).size(), s.size());
  if (rounded < 10) chars = std::max<std::size_t>(chars, 3);  // "0.5", "2.5"
  return text_ ? static_cast<double>(chars) + 1 : (chars * 0.64 + 0.6) * em_;
}

// The canvas laid out: margins, panels stacked, labels placed, y ranges, canvas labels; the
// drafts' panels then move into the chart.
void Builder::geometry() {
  const double right_margin = key_margin();
  const double plot_left = left_margin();
  const double plot_right = W_ - right_margin;
  const double bottom = stack_panels(plot_left, plot_right);
  place_labels();
  y_ranges();
  canvas_labels(plot_left, plot_right, bottom);
  for (Draft& d : drafts_) chart_.panels.push_back(std::move(d.panel));
}

// Right margin: the widest key, capped at about a third of the width (wider entries wrap).
double Builder::key_margin() {
  const double sample = text_ ? 8 : 3.2 * em_;  // the key's line sample and its gaps
  double key_w = 0;
  for (const Draft& d : drafts_) {
    for (const ChartSeries& s : d.panel.series) {
      if (!s.title.empty()) key_w = std::max(key_w, text_width_px(s.title, em_, text_));
    }
  }
  const double key_cap = W_ * (text_ ? 0.34 : 0.36);
  const double right_margin = key_w > 0 ? std::min(key_cap, key_w + sample + 1.5 * em_) : 1.5 * em_;
  if (key_w > 0 && key_w + sample + 1.5 * em_ > key_cap) {
    // Entries wider than the key wrap onto lines of their own (at ~0.6 em a character): a cut
    // would drop the peak, or the part of a name that tells two runs apart.
    const auto chars =
        static_cast<std::size_t>(std::max(6.0, (key_cap - sample - 1.5 * em_) / ((text_ ? 1.0 : 0.6) * em_)));
    wrap_key_titles(chars);
  }
  return right_margin;
}

// Every key entry wrapped at `chars` characters: its first line the title, the rest title_more.
void Builder::wrap_key_titles(std::size_t chars) {
  for (Draft& d : drafts_) {
    for (ChartSeries& s : d.panel.series) {
      if (s.title.empty()) continue;
      std::vector<std::string> lines = wrap_title(display_text(s.title, 400), chars);
      s.title = lines.front();
      s.title_more.assign(lines.begin() + 1, lines.end());
    }
  }
}

// Left margin: y label and the widest tic labels (the axes reach a little above the data).
double Builder::left_margin() const {
  double tics = 0;
  for (const Draft& d : drafts_) tics = std::max(tics, tic_label_width(d.data_max * 1.25));
  return (text_ ? 2 : 1.7 * line_) + tics + (text_ ? 0 : 0.4 * em_);
}

// Room above the first panel: the title's, or a little.
double Builder::top_chrome() const { return !title_text().empty() ? 2.0 * line_ : (text_ ? 1 : 0.8 * line_); }

// Vertical layout, from the top: each panel's box and key, the facets' titles; returns the
// last panel's foot (pixels from the top).
double Builder::stack_panels(double plot_left, double plot_right) {
  const double top = top_chrome();
  const double facet_title = o_.facet ? (text_ ? 1 : 1.5 * line_) : 0;
  const double panel_gap = text_ ? 1 : 0.7 * line_;
  const double stack_gap = text_ ? 1 : 0.5 * line_;  // text: the row after the frame's bottom one
  const std::size_t stacks = o_.facet ? traces_.size() : 1;

  // Notes are known only after the labels are placed, which needs the widths: reserve room for
  // the notes we already have plus one for label notes.
  const auto bottom_chrome = [&](std::size_t notes) {
    return (text_ ? 2.0 : 2.9 * line_) + static_cast<double>(notes) * (text_ ? 1 : 1.15 * line_) +
           (text_ ? 0 : 0.3 * line_);
  };
  // Room for the note of labels left out, said only once they are placed: two lines, as it wraps.
  std::size_t reserved_notes = chart_.notes.size() + (any_seeds() ? 2 : 0);
  double fixed = top + bottom_chrome(reserved_notes) + static_cast<double>(stacks) * facet_title +
                 static_cast<double>(stacks - 1) * stack_gap;
  double weights = 0;
  for (const Draft& d : drafts_) weights += panel_weight(d.panel.kind);
  fixed += static_cast<double>(drafts_.size() - stacks) * panel_gap;
  const double avail = std::max(static_cast<double>(H_) - fixed, 3.0 * static_cast<double>(drafts_.size()));

  double y = top;
  for (std::size_t i = 0; i < drafts_.size(); ++i) {
    Draft& d = drafts_[i];
    if (d.top_of_stack) {
      if (d.stack > 0) y += stack_gap;
      if (o_.facet) {
        facet_titles_.push_back({d.stack, y + (text_ ? 0 : facet_title * 0.55)});  // a text chart: its row
        y += facet_title;
      }
    } else {
      y += panel_gap;
    }
    d.plot_top = y;
    d.plot_h = avail * panel_weight(d.panel.kind) / weights;
    // A text chart's rows are whole: panels of fractional rows put a facet's title, or a note,
    // on the row gnuplot rounds a frame or the axis label to, and it was lost under it.
    if (text_) d.plot_h = std::max(std::floor(d.plot_h), 3.0);
    d.plot_left = plot_left;
    d.plot_w = std::max(plot_right - plot_left, 1.0);
    y += d.plot_h;
    d.panel.box = Box{plot_left / W_, plot_right / W_, screen_y(y), screen_y(d.plot_top)};
    d.panel.key = std::any_of(d.panel.series.begin(), d.panel.series.end(),
                              [](const ChartSeries& s) { return !s.title.empty(); });
    d.panel.key_x = (plot_right + (text_ ? 1 : 0.6 * em_)) / W_;
    d.panel.key_y = d.panel.box.top;
  }
  drafts_.back().panel.xtic_labels = true;
  return y;
}

// Canvas labels: title, facet titles, notes (below `bottom`, the last panel's foot, in pixels).
void Builder::canvas_labels(double plot_left, double plot_right, double bottom) {
  if (const std::string title = title_text(); !title.empty()) {
    ChartLabel l;
    l.text = display_text(title, static_cast<std::size_t>(std::max(10.0, (W_ - 2 * em_) / char_w(0.62))));
    l.kind = LabelKind::title;
    l.coords = ChartLabel::Coords::screen;
    l.x = 0.5;
    l.y = text_ ? screen_y(0) : screen_y(0.95 * line_);
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
    l.y = screen_y(yy);
    chart_.canvas_labels.push_back(std::move(l));
  }
  note_labels(bottom);
}

std::size_t Builder::note_chars() const {
  return static_cast<std::size_t>(std::max(10.0, (W_ - 2 * em_) / char_w(0.55)));
}

void Builder::note(const std::string& n) {
  if (std::find(said_.begin(), said_.end(), n) != said_.end()) return;
  said_.push_back(n);
  for (std::string& line : wrap_title(display_text(n, 400), note_chars())) chart_.notes.push_back(std::move(line));
}

// The notes, one a line below the time axis's label.
void Builder::note_labels(double bottom) {
  const double xlabel_y = bottom + (text_ ? 2 : 2.1 * line_);  // text: the frame, its tics' row, the label's
  double note_y = xlabel_y + (text_ ? 1 : 1.2 * line_);
  for (const std::string& n : chart_.notes) {  // each a line already (note)
    ChartLabel l;
    l.text = display_text(n, note_chars());
    l.kind = LabelKind::note;
    l.coords = ChartLabel::Coords::screen;
    l.x = (text_ ? 0 : 0.6 * em_) / W_;
    l.y = std::max(0.0, screen_y(note_y));
    chart_.canvas_labels.push_back(std::move(l));
    note_y += text_ ? 1 : 1.15 * line_;
  }
}

void Builder::y_ranges() {
  // Headroom for the label rows and the peak's text, as a fraction of each panel's height;
  // panels of one kind share their y range (facets compare at a glance).
  std::map<int, double> data_max, frac;
  for (const Draft& d : drafts_) {
    const int k = static_cast<int>(d.panel.kind);
    data_max[k] = std::max(data_max[k], d.data_max);
    frac[k] = std::max(frac[k], headroom(d));
  }
  for (Draft& d : drafts_) {
    const int k = static_cast<int>(d.panel.kind);
    double top = data_max[k] > 0 ? data_max[k] : 1.0;
    d.panel.ymin = 0;
    d.panel.ymax = top / (1.0 - frac[k]);

    // Stage lanes (overlays), then label rows, from the top of the panel down.
    lane_stages(d);
    row_labels(d);
    if (d.peak) peak_label(d);
  }
}

// The fraction of `d`'s height kept free above its data: its label rows and its peak's text.
double Builder::headroom(const Draft& d) const {
  double reserved = d.top_of_stack ? lane_pad() : 0.0;
  reserved += d.lanes * lane_h();
  if (d.layout.rows > 0) reserved += d.layout.rows * line_ + (text_ ? 0 : 0.2 * line_);
  if (d.peak)
    reserved += text_ ? 2.0 : 1.4 * line_;
  else if (!d.panel.points.empty())
    reserved += text_ ? 1.0 : 0.6 * line_;  // the peaks' marks
  double f = std::min(reserved / std::max(d.plot_h, 1.0), 0.6);
  if (d.panel.kind != Panel::memory && f < 0.07) f = 0.07;
  if (d.panel.kind == Panel::memory && f < 0.05) f = 0.05;
  return f;
}

// Overlays' stages as bars in their trace's lanes, each with its name inside.
void Builder::lane_stages(Draft& d) {
  for (const Draft::LaneStage& ls : d.lane_stages) {
    const double top_px = lane_pad() + ls.lane * lane_h();
    const double bar_h = lane_h() - (text_ ? 0 : 0.2 * line_);
    const LabelSeed& s = ls.seed;
    if (!text_) {
      d.panel.bands.push_back(
          ChartBand{s.x0, s.x1, ls.shade, s.color, 1.0 - (top_px + bar_h) / d.plot_h, 1.0 - top_px / d.plot_h});
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
}

// The placed labels (stages, checkpoints), in their rows below the lanes.
void Builder::row_labels(Draft& d) {
  const double rows_top = lane_pad() + d.lanes * lane_h();
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
}

// The peak's point and its text, turned left where it would run past the plot's right edge.
void Builder::peak_label(Draft& d) {
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

void Builder::time_axis() {
  const double span = xmax_ - xmin_;
  // Tic steps keep labels about 7 ems apart.
  const double plot_w = chart_.panels.empty() ? W_ : (chart_.panels[0].box.right - chart_.panels[0].box.left) * W_;
  // A text chart's labels are as wide as their characters: "5088:00" needs more than 8 columns.
  const double hours_digits = std::floor(std::log10(std::max(1.0, xmax_ / (xmax_ <= 2 * 3600 ? 60 : 3600)))) + 1;
  const double label_chars = xmax_ <= 600 ? 5 : hours_digits + 3;
  const double max_tics = std::max(2.0, plot_w / ((text_ ? std::max(8.0, label_chars + 2) : 6.5) * em_));
  const auto pick = [&](std::initializer_list<double> steps) {
    for (double s : steps) {
      if (span / s <= max_tics) return s;
    }
    return *(steps.end() - 1) * std::ceil(span / max_tics / *(steps.end() - 1));
  };
  if (xmax_ <= 600) {
    chart_.time_format = TimeFormat::seconds;
    chart_.xlabel = "time from start (s)";
    // A text chart's labels are characters: gnuplot's own choice there puts them closer than their
    // width, and the dumb terminal overwrites one with the next ("0.2" for 0.25). A 1-2-5 step
    // that keeps them 8 columns apart.
    if (text_ && span > 0) {
      const double raw = span / max_tics;
      const double decade = std::pow(10.0, std::floor(std::log10(raw)));
      const double base = raw / decade;
      double step = (base <= 1 ? 1 : base <= 2 ? 2 : base <= 5 ? 5 : 10) * decade;
      // A chart too narrow for two labels 8 apart still gets its start and one more.
      while (step > span) {
        const double d = std::pow(10.0, std::floor(std::log10(step)));
        const double b = step / d;
        step = (b > 4.9 ? 2 : b > 1.9 ? 1 : 0.5) * d;
      }
      chart_.xtic_step = step;
    }
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

}  // namespace qprof::plot::chart_detail
