// SPDX-License-Identifier: Apache-2.0
// Chart → gnuplot program. The look (terminal options, colours, line widths, fonts) belongs to
// the style template; this file only places things and names the template's styles:
//   linetypes 1–8   the palette (traces of an overlay, processes, GPU devices)
//   line styles 10–16 tree, PSS, USS, cgroup usage, CPU, I/O read, I/O write
//   line styles 20–25 kernel peak, cgroup peak, Σ VmHWM, peak point, checkpoint, killed command
//   qprof_* variables documented in plot/qprof.gp
#include "qprof/plot/script.hpp"

#include "qprof_builtin_style.hpp"

#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include "qprof/plot/escape.hpp"
#include "qprof/common/version.hpp"

#ifndef QPROF_PLOT_SOURCE_DIR
#define QPROF_PLOT_SOURCE_DIR ""
#endif
#ifndef QPROF_PLOT_INSTALL_DIR
#define QPROF_PLOT_INSTALL_DIR ""
#endif

namespace qprof::plot {
namespace {

std::string num(double v) { return gp_number(v); }

const char* role_style(Role r) {
  switch (r) {
    case Role::tree:
      return "ls 10";
    case Role::pss:
      return "ls 11";
    case Role::uss:
      return "ls 12";
    case Role::cgroup:
      return "ls 13";
    case Role::cpu:
      return "ls 14";
    case Role::io_read:
      return "ls 15";
    case Role::io_write:
      return "ls 16";
    case Role::peak_kernel:
      return "ls 20";
    case Role::peak_cgroup:
      return "ls 21";
    case Role::peak_hwm:
      return "ls 22";
    case Role::limit:
      return "ls 26";
    case Role::trend:
      return "ls 27";
    case Role::rss_sum:
      return "ls 28";
    case Role::dir_size:
    case Role::dir_free:
      return "ls 10";
    case Role::trace:
    case Role::child:
    case Role::gpu_tree:
    case Role::gpu_used:
    case Role::torch_allocated:
    case Role::torch_reserved:
      return "ls 10";
  }
  return "ls 10";
}

bool is_peak_line(Role r) {
  return r == Role::peak_kernel || r == Role::peak_cgroup || r == Role::peak_hwm || r == Role::limit;
}

std::string series_style(const ChartSeries& s) {
  if (s.color <= 0) {
    // The role's own style (peak lines are dashed there already).
    std::string st = role_style(s.role);
    if (s.dashed && !is_peak_line(s.role)) st += " dt 2";
    return st;
  }
  std::string st = "lt " + std::to_string(s.color);
  if (is_peak_line(s.role)) return st + " lw qprof_thin_width dt 2";
  if (s.role == Role::child || s.role == Role::gpu_used)
    st += " lw qprof_thin_width";
  else
    st += " lw qprof_line_width";
  if (s.dashed) st += s.role == Role::child ? " dt 3" : " dt 2";
  return st;
}

std::string text_color(const ChartLabel& l) {
  if (l.color > 0) return "tc lt " + std::to_string(l.color);
  switch (l.kind) {
    case LabelKind::title:
      return "tc rgb qprof_title_color";
    case LabelKind::note:
      return "tc rgb qprof_note_color";
    case LabelKind::exit:
      return "tc rgb qprof_exit_color";
    case LabelKind::peak:
      return "tc rgb qprof_peak_color";
    default:
      return "tc rgb qprof_text_color";
  }
}

std::string font_scale(LabelKind k) {
  switch (k) {
    case LabelKind::title:
      return "qprof_title_scale";
    case LabelKind::facet:
      return "qprof_facet_scale";
    case LabelKind::note:
      return "qprof_note_scale";
    default:
      return "qprof_label_scale";
  }
}

void write_label(std::ostream& out, const ChartLabel& l, bool text_chart) {
  out << "set label " << gp_string(l.text) << " at ";
  switch (l.coords) {
    case ChartLabel::Coords::first_graph:
      out << "first " << num(l.x) << ", graph " << num(l.y);
      break;
    case ChartLabel::Coords::first_first:
      out << "first " << num(l.x) << ", first " << num(l.y);
      break;
    case ChartLabel::Coords::screen:
      out << "screen " << num(l.x) << ", screen " << num(l.y);
      break;
  }
  out << (l.center ? " center" : l.right ? " right" : " left");
  if (l.dx_em != 0 || l.dy_em != 0) out << " offset character " << num(l.dx_em) << ", " << num(l.dy_em);
  out << " front " << text_color(l);
  if (!text_chart) {
    out << " font sprintf(',%g', qprof_font_size * " << font_scale(l.kind) << ")";
    if (l.kind == LabelKind::checkpoint || l.kind == LabelKind::exit || l.kind == LabelKind::peak) out << " boxed";
  }
  out << "\n";
}

std::string time_format(TimeFormat f) {
  switch (f) {
    case TimeFormat::seconds:
      return "set format x '% h'\n";
    case TimeFormat::minutes:
      return "set format x '%tM:%02tS' timedate\n";
    case TimeFormat::hours:
      return "set format x '%tH:%02tM' timedate\n";
  }
  return {};
}

// A wrapped key entry's further lines: entries with no line sample and no data (gnuplot 5.2 has
// no keyentry), their text through gp_string as every title's.
void key_lines(ScriptChunk& chunk, const ChartSeries& s) {
  for (const std::string& line : s.title_more) {
    chunk.plot.push_back({"NaN with lines lt nodraw title " + gp_string(line), -1});
  }
}

// Margins, ranges, tics, axis labels and key of panel `p`.
void write_frame(std::ostream& out, const Chart& chart, const ChartPanel& p) {
  out << "set lmargin at screen " << num(p.box.left) << "\nset rmargin at screen " << num(p.box.right)
      << "\nset bmargin at screen " << num(p.box.bottom) << "\nset tmargin at screen " << num(p.box.top) << "\n";
  out << "set xrange [" << num(p.xmin) << ":" << num(p.xmax) << "]\n";
  out << "set yrange [" << num(p.ymin) << ":" << num(p.ymax) << "]\n";
  if (chart.xtic_step > 0)
    out << "set xtics " << num(chart.xtic_step) << "\n";
  else
    out << "set xtics autofreq\n";
  if (p.xtic_labels) {
    out << time_format(chart.time_format);
    out << "set xlabel " << gp_string(chart.xlabel) << "\n";
  } else {
    out << "set format x ''\nset xlabel ''\n";  // not unset: that would drop a style's colour
  }
  out << "set format y '% h'\n";
  out << "set ylabel " << gp_string(p.ylabel) << "\n";
  if (p.key) {
    out << "set key at screen " << num(p.key_x) << ", screen " << num(p.key_y)
        << " left top vertical Left reverse noautotitle\n";
  } else {
    out << "unset key\n";
  }
}

// The top of a vertical line: a text chart rounds graph 1 up to the row above the frame.
std::string graph_top(bool text_chart) { return text_chart ? "graph 0.98" : "graph 1"; }

// Stage bands, shaded behind the series.
void write_bands(std::ostream& out, const ChartPanel& p, bool text_chart) {
  int object = 1;
  for (const ChartBand& b : p.bands) {
    if (text_chart) {
      // A text chart cannot shade: the stage's edges instead.
      out << "set arrow from first " << num(b.x0) << ", graph 0 to first " << num(b.x0) << ", " << graph_top(text_chart)
          << " nohead back ls 24\n";
      out << "set arrow from first " << num(b.x1) << ", graph 0 to first " << num(b.x1) << ", " << graph_top(text_chart)
          << " nohead back ls 24\n";
      continue;
    }
    out << "set object " << object++ << " rect from first " << num(b.x0) << ", graph " << num(b.y0) << " to first "
        << num(b.x1) << ", graph " << num(b.y1) << " behind ";
    if (b.color > 0) {
      out << "fc lt " << b.color << " fs transparent solid qprof_lane_alpha" << b.shade << " noborder\n";
    } else {
      out << "fc rgb qprof_band_color" << b.shade << " fs solid 1.0 noborder\n";
    }
  }
}

// Checkpoints and the end of a killed command.
void write_vlines(std::ostream& out, const ChartPanel& p, bool text_chart) {
  for (const ChartVLine& v : p.vlines) {
    out << "set arrow from first " << num(v.x) << ", graph 0 to first " << num(v.x) << ", " << graph_top(text_chart)
        << " nohead back ";
    if (v.exit)
      out << "ls 25\n";
    else if (v.color > 0)
      out << "lt " << v.color << " lw qprof_thin_width dt 2\n";
    else
      out << "ls 24\n";
  }
}

// One plot command; its data sets follow in the same order.
void add_item(ScriptChunk& chunk, std::string spec, std::vector<std::pair<double, double>> data) {
  chunk.plot.push_back({std::move(spec), static_cast<int>(chunk.data.size())});
  chunk.data.push_back(std::move(data));
}

// A series' points for gnuplot.
std::vector<std::pair<double, double>> series_points(const ChartSeries& s) {
  std::vector<std::pair<double, double>> d;
  d.reserve(s.data.size());
  for (const Point& pt : s.data) {
    // An undefined point (NaN, in text and in binary) ends gnuplot's line: none across a gap.
    if (s.gap > 0 && !d.empty() && pt.t - d.back().first > s.gap) {
      d.emplace_back((d.back().first + pt.t) / 2, std::numeric_limits<double>::quiet_NaN());
    }
    d.emplace_back(pt.t, pt.v);
  }
  return d;
}

std::string title_spec(const ChartSeries& s) { return s.title.empty() ? " notitle" : " title " + gp_string(s.title); }

// An opaque area: the stacked kinds are sent largest first, each covering the next.
std::string filled_spec(const ChartSeries& s) {
  std::string spec =
      "using 1:2 with filledcurves y1=0 lt " + std::to_string(std::max(s.color, 1)) + " fs solid 0.6 noborder";
  return spec + title_spec(s);
}

// A line; `text_mark` is its linetype on a text chart.
std::string line_spec(const ChartSeries& s, bool text_chart, int text_mark) {
  // gnuplot's dumb terminal draws a line with its linetype's character and ignores colours and
  // dashes: each series its own linetype there, or two would share one mark.
  std::string spec = std::string("using 1:2 with ") +
                     (s.steps   ? "steps "
                      : s.marks ? "linespoints "
                                : "lines ") +
                     (text_chart ? "lt " + std::to_string(text_mark) : series_style(s));
  if (s.marks && !s.steps) spec += " pt 7 ps qprof_point_size * 0.4";  // a dot at each reading
  return spec + title_spec(s);
}

// The panel's series and points, as the items of its plot command.
void plot_items(ScriptChunk& chunk, const ChartPanel& p, bool text_chart) {
  int text_marks = 0;
  for (const ChartSeries& s : p.series) {
    if (s.data.empty()) continue;
    std::vector<std::pair<double, double>> d = series_points(s);
    if (s.role == Role::tree && !text_chart) {
      add_item(chunk, "using 1:2 with filledcurves y1=0 ls 10 fs transparent solid qprof_fill_alpha noborder notitle",
               d);
    }
    if (s.filled && !text_chart) {
      add_item(chunk, filled_spec(s), std::move(d));
    } else {
      add_item(chunk, line_spec(s, text_chart, text_chart ? ++text_marks : 0), std::move(d));
    }
    key_lines(chunk, s);
  }
  for (const ChartPoint& pt : p.points) {
    add_item(chunk,
             pt.color > 0 ? "using 1:2 with points lt " + std::to_string(pt.color) + " pt 7 ps qprof_point_size notitle"
                          : std::string("using 1:2 with points ls 23 notitle"),
             {{pt.x, pt.y}});
  }
  if (chunk.plot.empty()) chunk.plot.push_back({"NaN notitle", -1});
}

void write_panel(ScriptChunk& chunk, const Chart& chart, const ChartPanel& p, bool first) {
  const bool text_chart = chart.format == Format::text;
  std::ostringstream out;
  out << "# ---- panel: " << panel_name(p.kind) << "\n";
  out << "unset label\nunset arrow\nunset object\n";
  if (first) {
    for (const ChartLabel& l : chart.canvas_labels) write_label(out, l, text_chart);
  }
  write_frame(out, chart, p);
  write_bands(out, p, text_chart);
  write_vlines(out, p, text_chart);
  for (const ChartLabel& l : p.labels) write_label(out, l, text_chart);
  plot_items(chunk, p, text_chart);
  chunk.commands = out.str();
}

std::string read_text_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::string plot_command(const ScriptChunk& chunk, const std::function<std::string(std::size_t)>& source) {
  std::string out = "plot ";
  for (std::size_t i = 0; i < chunk.plot.size(); ++i) {
    if (i > 0) out += ", \\\n     ";
    const PlotItem& item = chunk.plot[i];
    if (item.data >= 0) out += source(static_cast<std::size_t>(item.data)) + " ";
    out += item.spec;
  }
  return out + "\n";
}

std::string Script::commands() const {
  std::string out;
  for (const ScriptChunk& c : chunks) {
    out += c.commands;
    if (!c.plot.empty()) out += plot_command(c, [](std::size_t) { return std::string("'-'"); });
  }
  return out;
}

Script write_script(const Chart& chart, const std::vector<StyleSource>& styles, OutputTarget target,
                    const std::string& output_name) {
  Script script;
  std::ostringstream head;
  head << "# qprof " << kVersion << " plot: a generated gnuplot program (gnuplot 5.2 or newer)\n";
  head << "if (GPVAL_VERSION < 5.2) { print 'qprof plot needs gnuplot 5.2 or newer'; exit status 3 }\n";
  head << "qprof_format = '" << format_name(chart.format) << "'\n";
  head << "qprof_width = " << chart.width << "\nqprof_height = " << chart.height << "\n";
  head << "qprof_font_size = " << num(chart.font_size) << "\n";
  for (std::size_t i = 0; i < styles.size(); ++i) {
    head << "# ---- style " << (i + 1) << " of " << styles.size() << "\n" << styles[i].text;
    if (!styles[i].text.empty() && styles[i].text.back() != '\n') head << '\n';
  }
  head << "# ---- chart\n";
  // Whatever a style chose: trace text is shown as it is, never as enhanced-text markup.
  head << "set termoption noenhanced\nset encoding utf8\n";
  switch (target) {
    case OutputTarget::fd3:
      head << "set output '/dev/fd/3'\n";
      break;
    case OutputTarget::stdout_:
      head << "set output\n";
      break;
    case OutputTarget::named:
      head << "set output " << gp_string(output_name) << "\n";
      break;
  }
  head << "set multiplot\n";
  script.chunks.push_back({head.str(), {}, {}});
  for (std::size_t i = 0; i < chart.panels.size(); ++i) {
    ScriptChunk c;
    write_panel(c, chart, chart.panels[i], i == 0);
    script.chunks.push_back(std::move(c));
  }
  script.chunks.push_back({"unset multiplot\nset output\n", {}, {}});
  return script;
}

std::vector<std::string> template_dirs() {
  std::vector<std::string> dirs;
  if (const char* env = std::getenv("QPROF_PLOT_DIR"); env && *env) dirs.emplace_back(env);
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) dirs.push_back((exe.parent_path().parent_path() / "share" / "qprof" / "plot").string());
  if (*QPROF_PLOT_SOURCE_DIR) dirs.emplace_back(QPROF_PLOT_SOURCE_DIR);
  if (*QPROF_PLOT_INSTALL_DIR) dirs.emplace_back(QPROF_PLOT_INSTALL_DIR);
  return dirs;
}

StyleSource default_style(const std::vector<std::string>& dirs) {
  for (const std::string& dir : dirs) {
    const std::filesystem::path p = std::filesystem::path(dir) / "qprof.gp";
    if (::access(p.c_str(), R_OK) == 0) return {p.string(), read_text_file(p)};
  }
  // None on disk (a binary copied alone): the copy of plot/qprof.gp made at build time.
  return {"plot/qprof.gp (built in)", kBuiltinStyle};
}

}  // namespace qprof::plot
