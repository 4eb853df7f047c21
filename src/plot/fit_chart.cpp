// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/output_file.hpp"
#include "qprof/plot/fit_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "qprof/plot/escape.hpp"
#include "qprof/plot/gnuplot.hpp"
#include "qprof/plot/plot.hpp"
#include "qprof/plot/script.hpp"

namespace qprof::plot {
namespace {

constexpr int kWidth = 1024, kHeight = 640;
constexpr double kFontSize = 11;

std::string num(double v) { return gp_number(v); }

}  // namespace

Script fit_script(const FitChart& chart, const std::string& format) {
  std::ostringstream head;
  head << "qprof_format = '" << format << "'\nqprof_width = " << kWidth << "\nqprof_height = " << kHeight
       << "\nqprof_font_size = " << num(kFontSize) << "\n";
  head << default_style().text << "\n";
  head << "set termoption noenhanced\nset encoding utf8\nset output '/dev/fd/3'\n";
  head << "set title " << gp_string("qprof fit: " + display_text(chart.command, 120)) << "\n";
  head << "set xlabel 'memory limit (MiB)'\nset ylabel 'duration (s)'\nset grid\nset key below\n";
  // Up to the cutoff, where the too slow runs sit, with room above it.
  double top = chart.cutoff_seconds;
  for (const FitChartPoint& p : chart.points) top = std::max(top, p.seconds);
  head << "set yrange [0:" << num(top > 0 ? top * 1.1 : 1) << "]\n";
  // Every run at one limit (a job with nothing to search): gnuplot would warn of an empty x range
  // and widen it its own way; the range is set around that limit instead.
  std::vector<double> xs;
  for (const FitChartPoint& p : chart.points) xs.push_back(p.limit_mib);
  for (const FitChartMark& m : chart.marks) xs.push_back(m.limit_mib);
  if (!xs.empty() && *std::min_element(xs.begin(), xs.end()) == *std::max_element(xs.begin(), xs.end())) {
    const double x = xs.front();
    const double half = std::max(std::abs(x) * 0.1, 1.0);
    head << "set xrange [" << num(x - half) << ":" << num(x + half) << "]\n";
  }
  // Marks at one limit share one line and one label ("runs in, within 4x 230 MiB").
  std::vector<std::pair<double, std::string>> marks;
  for (const FitChartMark& m : chart.marks) {
    auto same = std::find_if(marks.begin(), marks.end(), [&](const auto& x) { return x.first == m.limit_mib; });
    if (same == marks.end())
      marks.emplace_back(m.limit_mib, m.label);
    else
      same->second += ", " + m.label;
  }
  // Each label stands clear left of its line (0.8 characters drew it over the line, rotated text
  // being centred on its anchor), or right of it where its line is the chart's left edge.
  const double leftmost = xs.empty() ? 0 : *std::min_element(xs.begin(), xs.end());
  for (const auto& [limit, label] : marks) {
    head << "set arrow from first " << num(limit) << ", graph 0 to first " << num(limit) << ", graph 1 nohead ls 24\n";
    head << "set label " << gp_string(label + " " + num(std::round(limit * 10) / 10) + " MiB") << " at first "
         << num(limit) << ", graph 0.97 rotate by 90 right offset " << (limit <= leftmost ? "1.5" : "-1.5") << ",0\n";
  }
  if (chart.baseline_seconds > 0) {
    head << "set arrow from graph 0, first " << num(chart.baseline_seconds) << " to graph 1, first "
         << num(chart.baseline_seconds) << " nohead ls 22\n";
  }
  if (chart.cutoff_seconds > 0) {
    head << "set arrow from graph 0, first " << num(chart.cutoff_seconds) << " to graph 1, first "
         << num(chart.cutoff_seconds) << " nohead ls 20\n";
  }
  ScriptChunk chunk;
  chunk.commands = head.str();
  struct Series {
    FitChartPoint::Kind kind;
    const char* spec;
  };
  // Too slow runs sit at the cutoff (they ran at least that long); failed ones at 0.
  const Series series[] = {
      {FitChartPoint::completed, "using 1:2 with linespoints lt 1 pt 7 title 'completed'"},
      {FitChartPoint::too_slow, "using 1:2 with points lt 2 pt 9 ps 1.5 title 'too slow (stopped)'"},
      {FitChartPoint::oom_killed, "using 1:2 with points lt 4 pt 2 ps 1.5 title 'OOM-killed'"},
      {FitChartPoint::failed, "using 1:2 with points lt 5 pt 6 ps 1.5 title 'failed otherwise'"},
  };
  for (const Series& s : series) {
    std::vector<std::pair<double, double>> data;
    for (const FitChartPoint& p : chart.points) {
      if (p.kind != s.kind) continue;
      const double y = p.kind == FitChartPoint::completed  ? p.seconds
                       : p.kind == FitChartPoint::too_slow ? chart.cutoff_seconds
                                                           : 0;
      data.emplace_back(p.limit_mib, y);
    }
    if (data.empty()) continue;
    std::sort(data.begin(), data.end());
    chunk.plot.push_back({s.spec, static_cast<int>(chunk.data.size())});
    chunk.data.push_back(std::move(data));
  }
  if (chunk.plot.empty()) chunk.plot.push_back({"NaN notitle", -1});
  Script script;
  script.chunks.push_back(std::move(chunk));
  script.chunks.push_back({"set output\n", {}, {}});
  return script;
}

Result<void> plot_fit(const FitChart& chart, const std::string& output, const WarningSink& warn,
                      const std::string& gnuplot) {
  const std::optional<Format> format = format_for(output);
  if (!format || *format == Format::text) {
    return Failure{"--plot: the chart's file must end in .png, .svg or .pdf"};
  }
  const Result<std::string> program = find_gnuplot(gnuplot, "--plot");
  if (!program) return program.failure();
  Result<std::unique_ptr<OutputFile>> out = OutputFile::open(output);
  if (!out) return out.failure();
  const Result<void> drawn =
      run_gnuplot(*program, fit_script(chart, std::string(format_name(*format))), (*out)->fd(), warn);
  if (!drawn) return drawn;
  return (*out)->commit();
}

}  // namespace qprof::plot
