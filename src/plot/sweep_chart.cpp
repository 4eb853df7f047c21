// SPDX-License-Identifier: Apache-2.0
#include "qprof/plot/sweep_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "qprof/common/output_file.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/common/version.hpp"
#include "qprof/plot/escape.hpp"
#include "qprof/plot/gnuplot.hpp"
#include "qprof/plot/off_chart.hpp"
#include "qprof/plot/plot.hpp"
#include "qprof/plot/script.hpp"

namespace qprof::plot {
using analysis::FigureModel;
using analysis::SweepModel;
namespace {

std::string num(double v) { return gp_number(v); }

// "with … title "…"": the title always through gp_string.
PlotItem item(int data, const std::string& how, const std::string& title) {
  return {"using 1:2 " + how + " title " + gp_string(title), data};
}

}  // namespace

namespace {

// The gnuplot settings of a sweep's chart: its terminal, style, title and axes (the names are
// the user's, escaped for gnuplot).
std::string sweep_script_head(const SweepModel& model, const FigureModel& f, Format format, const std::string& axis) {
  std::ostringstream head;
  head << "# qprof " << kVersion << " sweep chart: a generated gnuplot program (gnuplot 5.2 or newer)\n";
  head << "qprof_format = '" << format_name(format)
       << "'\nqprof_width = 1024\nqprof_height = 640\nqprof_font_size = 10\n";
  head << default_style().text << "\n";
  head << "set termoption noenhanced\nset encoding utf8\nset output '/dev/fd/3'\n";
  head << "set title " << gp_string(f.title + " against " + model.parameter) << "\n";
  head << "set xlabel " << gp_string(model.parameter) << "\nset ylabel " << gp_string(axis) << "\n";
  head << "set key top left\nset grid\nset yrange [0:*]\nset xrange [0:*]\n";
  return head.str();
}

}  // namespace

namespace {

// The points drawn, in the figure's own unit (bytes or seconds): the runs, their spread and the
// fitted curve from 0 (or the smallest value, for a power law) past the largest value run.
struct SweepPoints {
  std::vector<std::pair<double, double>> runs, spread, curve;
  double x_end = 0;
  double top = 0;  // the largest value drawn
};

SweepPoints sweep_points(const FigureModel& f, std::optional<double> solved, bool solved_near) {
  SweepPoints p;
  for (std::size_t i = 0; i < f.x.size(); ++i) {
    p.runs.emplace_back(f.x[i], f.y[i]);
    if (f.low[i] != f.high[i]) {
      p.spread.emplace_back(f.x[i], f.low[i]);
      p.spread.emplace_back(f.x[i], f.high[i]);
    }
  }
  p.top = *std::max_element(f.high.begin(), f.high.end());
  p.x_end = std::max(f.x.back(), solved_near ? *solved : 0.0) * 1.15;
  const double x_start = f.power_chosen ? f.x.front() / 2 : 0.0;
  for (int k = 0; k <= 100; ++k) {
    const double x = x_start + (p.x_end - x_start) * k / 100.0;
    p.curve.emplace_back(x, f.predict(x));
    p.top = std::max(p.top, p.curve.back().second);
  }
  return p;
}

std::vector<std::pair<double, double>> scaled(std::vector<std::pair<double, double>> points, double scale) {
  for (auto& [x, y] : points) y /= scale;
  return points;
}

// The limit, as a line where it shares the data's scale, else (far above, as the machine's
// MemTotal is for a job of a few MiB) in a note under the chart that also gives the solved value,
// the same rule as qprof plot's limit line (off_chart).
void limit_items(ScriptChunk& chunk, const std::string& parameter, Bytes limit, std::optional<double> solved,
                 bool solved_near, const SweepPoints& p, double scale) {
  const std::string fits = solved ? parameter + " \u2264 " + num(*solved) : std::string();
  if (off_chart(static_cast<double>(limit), p.top)) {
    const std::string note = "limit " + human_bytes(limit) + " (off the chart)" + (solved ? ": " + fits : "");
    chunk.commands += "set bmargin 5\nset label 1 " + gp_string(note) + " at character 1, 1 left\n";
    return;
  }
  const double y = static_cast<double>(limit) / scale;
  chunk.data.push_back({{0, y}, {p.x_end, y}});
  const std::string off_chart_x = solved && !solved_near ? " (" + fits + ", off the chart)" : "";
  chunk.plot.push_back(
      item(static_cast<int>(chunk.data.size() - 1), "with lines ls 26", "limit " + human_bytes(limit) + off_chart_x));
  if (solved_near) {
    chunk.data.push_back({{*solved, 0}, {*solved, y}});
    chunk.plot.push_back(item(static_cast<int>(chunk.data.size() - 1), "with lines ls 27", fits));
  }
}

}  // namespace

bool sweep_chart_output(std::string_view output) {
  const auto format = format_for(output);
  return format && *format != Format::text;
}

Script sweep_script(const SweepModel& model, const FigureModel& f, std::optional<Bytes> limit,
                    std::optional<double> solved, Format format) {
  // The axis spans the values run; the solved value joins it only where it lies near them (up to
  // half the largest value past it), else the legend gives it: an axis to 460 workers for three
  // points at 1, 2 and 4 shows only the extrapolation.
  const bool solved_near = solved && *solved <= f.x.back() * 1.5;
  const SweepPoints p = sweep_points(f, solved, solved_near);
  // Sizes in one unit, chosen from the largest value drawn (the limit where it is drawn);
  // durations in seconds.
  const bool limit_drawn = limit && f.bytes && !off_chart(static_cast<double>(*limit), p.top);
  const double top = limit_drawn ? std::max(p.top, static_cast<double>(*limit)) : p.top;
  const Unit unit = f.bytes ? auto_unit(bytes_from_double(top)) : Unit::B;
  const double scale = f.bytes ? unit_bytes(unit) : 1.0;
  const std::string axis = f.title + (f.bytes ? " (" + std::string(unit_name(unit)) + ")" : " (s)");

  Script script;
  ScriptChunk chunk;
  chunk.commands = sweep_script_head(model, f, format, axis);
  char r2[32];
  std::snprintf(r2, sizeof r2, "R\u00b2 %.3f", f.r2());
  chunk.data.push_back(scaled(p.runs, scale));
  chunk.plot.push_back(item(0, "with points ls 23", "runs (median)"));
  chunk.data.push_back(scaled(p.curve, scale));
  chunk.plot.push_back(
      item(1, "with lines ls 10", std::string(f.power_chosen ? "power law" : "linear") + " fit, " + r2));
  if (!p.spread.empty()) {
    chunk.data.push_back(scaled(p.spread, scale));
    chunk.plot.push_back(
        item(static_cast<int>(chunk.data.size() - 1), "with points pt 1 lc rgb '#80868b'", "repeats' min and max"));
  }
  if (limit && f.bytes) limit_items(chunk, model.parameter, *limit, solved, solved_near, p, scale);
  script.chunks.push_back(std::move(chunk));
  script.chunks.push_back({"set output\n", {}, {}});
  return script;
}

Result<void> plot_sweep(const SweepModel& model, const FigureModel& f, std::optional<Bytes> limit,
                        std::optional<double> solved, const SweepChartOptions& o) {
  // Its failures are terminal-safe of themselves (the file name and the figure's title are the user's).
  if (!sweep_chart_output(o.output))
    return Failure{"--plot " + terminal_text(o.output) + ": " + std::string(kSweepChartFiles)};
  const Format format = *format_for(o.output);
  if (!f.fitted())
    return Failure{"--plot: " + terminal_text(f.title) + " has fewer than two values: nothing to fit, nothing to draw"};
  const Result<std::string> gnuplot = find_gnuplot(o.gnuplot, "--plot");
  if (!gnuplot) return gnuplot.failure();
  const Script script = sweep_script(model, f, limit, solved, format);
  if (!o.script.empty()) {
    if (Result<void> saved = save_script(script, o.script); !saved) return saved;
  }
  Result<std::unique_ptr<OutputFile>> out = OutputFile::open(o.output);
  if (!out) return out.failure();
  if (Result<void> drawn = run_gnuplot(*gnuplot, script, (*out)->fd(), [](const std::string&) {}); !drawn) return drawn;
  return (*out)->commit();
}

}  // namespace qprof::plot
