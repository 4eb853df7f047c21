// SPDX-License-Identifier: Apache-2.0
#include "qprof/plot/sweep_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "qprof/common/output_file.hpp"
#include "qprof/common/version.hpp"
#include "qprof/plot/escape.hpp"
#include "qprof/plot/gnuplot.hpp"
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

Result<void> plot_sweep(const SweepModel& model, const FigureModel& f, std::optional<Bytes> limit,
                        std::optional<double> solved, const SweepChartOptions& o) {
  const auto format = format_for(o.output);
  if (!format || *format == Format::text)
    return Failure{"--plot " + o.output + ": a sweep's chart is a .png, .svg or .pdf file"};
  if (!f.fitted()) return Failure{"--plot: " + f.title + " has fewer than two values: nothing to fit, nothing to draw"};
  const Result<std::string> gnuplot = find_gnuplot(o.gnuplot, "--plot");
  if (!gnuplot) return gnuplot.failure();
  // Sizes in one unit, chosen from the largest value drawn; durations in seconds.
  double top = *std::max_element(f.high.begin(), f.high.end());
  if (limit && f.bytes) top = std::max(top, static_cast<double>(*limit));
  const Unit unit = f.bytes ? auto_unit(bytes_from_double(top)) : Unit::B;
  const double scale = f.bytes ? unit_bytes(unit) : 1.0;
  const std::string axis = f.title + (f.bytes ? " (" + std::string(unit_name(unit)) + ")" : " (s)");

  Script script;
  ScriptChunk chunk;
  chunk.commands = sweep_script_head(model, f, *format, axis);
  std::vector<std::pair<double, double>> points, spread;
  for (std::size_t i = 0; i < f.x.size(); ++i) {
    points.emplace_back(f.x[i], f.y[i] / scale);
    if (f.low[i] != f.high[i]) {
      spread.emplace_back(f.x[i], f.low[i] / scale);
      spread.emplace_back(f.x[i], f.high[i] / scale);
    }
  }
  // The axis spans the values run; the solved value joins it only where it lies near them (up to
  // half the largest value past it), else the legend gives it: an axis to 460 workers for three
  // points at 1, 2 and 4 shows only the extrapolation.
  const bool solved_near = solved && *solved <= f.x.back() * 1.5;
  // The fitted curve from 0 (or the smallest value, for a power law) past the largest value run.
  const double x_end = std::max(f.x.back(), solved_near ? *solved : 0.0) * 1.15;
  const double x_start = f.power_chosen ? f.x.front() / 2 : 0.0;
  std::vector<std::pair<double, double>> curve;
  for (int k = 0; k <= 100; ++k) {
    const double x = x_start + (x_end - x_start) * k / 100.0;
    curve.emplace_back(x, f.predict(x) / scale);
  }
  char r2[32];
  std::snprintf(r2, sizeof r2, "R\u00b2 %.3f", f.r2());
  chunk.data.push_back(points);
  chunk.plot.push_back(item(0, "with points ls 23", "runs (median)"));
  chunk.data.push_back(curve);
  chunk.plot.push_back(
      item(1, "with lines ls 10", std::string(f.power_chosen ? "power law" : "linear") + " fit, " + r2));
  if (!spread.empty()) {
    chunk.data.push_back(spread);
    chunk.plot.push_back(
        item(static_cast<int>(chunk.data.size() - 1), "with points pt 1 lc rgb '#80868b'", "repeats' min and max"));
  }
  if (limit && f.bytes) {
    const double y = static_cast<double>(*limit) / scale;
    chunk.data.push_back({{0, y}, {x_end, y}});
    const std::string off_chart =
        solved && !solved_near ? " (" + model.parameter + " \u2264 " + num(*solved) + ", off the chart)" : "";
    chunk.plot.push_back(
        item(static_cast<int>(chunk.data.size() - 1), "with lines ls 26", "limit " + human_bytes(*limit) + off_chart));
    if (solved_near) {
      chunk.data.push_back({{*solved, 0}, {*solved, y}});
      chunk.plot.push_back(item(static_cast<int>(chunk.data.size() - 1), "with lines ls 27",
                                model.parameter + " \u2264 " + num(*solved)));
    }
  }
  script.chunks.push_back(std::move(chunk));
  script.chunks.push_back({"set output\n", {}, {}});
  if (!o.script.empty()) {
    if (Result<void> saved = save_script(script, o.script); !saved) return saved;
  }
  Result<std::unique_ptr<OutputFile>> out = OutputFile::open(o.output);
  if (!out) return out.failure();
  if (Result<void> drawn = run_gnuplot(*gnuplot, script, (*out)->fd(), [](const std::string&) {}); !drawn) return drawn;
  return (*out)->commit();
}

}  // namespace qprof::plot
