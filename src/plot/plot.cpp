// SPDX-License-Identifier: Apache-2.0
// qprof plot end to end: options → streamed reduction of each trace → chart → gnuplot.
#include "qprof/plot/plot.hpp"
#include "qprof/analysis/default_metric.hpp"
#include "qprof/analysis/job.hpp"
#include "qprof/analysis/metric_table.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>

#include "qprof/common/output_file.hpp"
#include "qprof/common/text_wrap.hpp"
#include "qprof/common/trace_label.hpp"
#include "qprof/common/units.hpp"
#include "qprof/plot/chart.hpp"
#include "qprof/plot/gnuplot.hpp"
#include "qprof/plot/reduce.hpp"
#include "qprof/plot/script.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::plot {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

std::optional<double> parse_seconds(std::string_view s) {
  const auto v = parse_duration(trim(s));  // 90, 90s, 1.5min: as every duration of qprof's
  if (!v || !std::isfinite(*v) || *v > kMaxSpan) return std::nullopt;
  return v;
}

// The terminal's rows, when stdout is one.
std::optional<int> terminal_rows() {
  winsize ws{};
  if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0) return ws.ws_row;
  return std::nullopt;
}

// A style is a few lines of gnuplot; more than this is not a style (--style /dev/zero).
constexpr std::size_t kMaxStyleBytes = 1 << 20;

Result<std::string> read_style(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Failure{"--style " + path + ": " + std::strerror(errno)};
  std::string text(kMaxStyleBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > kMaxStyleBytes) return Failure{"--style " + path + ": longer than 1 MiB, not a gnuplot style"};
  return text;
}

// Each trace's name: its --label, else a rank's trace as every view names it ("rank 0 (vm)", as
// export and compare do), else its file's name less ".dat" (common/trace_label: the names every
// command gives traces shown together; two alike get their place, "#1", "#2").
std::vector<std::string> trace_labels(const std::vector<Input>& inputs, const std::vector<TraceData>& data) {
  std::vector<std::string> paths, labels;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    paths.push_back(inputs[i].path);
    labels.push_back(analysis::given_or_rank_label(inputs[i].label, data[i].meta.job.rank, data[i].meta.host));
  }
  return trace_names(paths, labels);
}

}  // namespace

std::optional<Format> format_for(std::string_view output) {
  if (output == "-") return Format::text;
  const std::string ext = lower(std::filesystem::path(std::string(output)).extension().string());
  if (ext == ".png") return Format::png;
  if (ext == ".svg") return Format::svg;
  if (ext == ".pdf") return Format::pdf;
  return std::nullopt;
}

std::string_view format_name(Format f) {
  switch (f) {
    case Format::png:
      return "png";
    case Format::svg:
      return "svg";
    case Format::pdf:
      return "pdf";
    case Format::text:
      return "dumb";
  }
  return "png";
}

std::optional<std::pair<int, int>> parse_size_spec(std::string_view spec) {
  const std::size_t x = spec.find_first_of("xX");
  if (x == std::string_view::npos) return std::nullopt;
  int w = 0, h = 0;
  const std::string_view a = trim(spec.substr(0, x)), b = trim(spec.substr(x + 1));
  auto ra = std::from_chars(a.data(), a.data() + a.size(), w);
  auto rb = std::from_chars(b.data(), b.data() + b.size(), h);
  if (a.empty() || b.empty() || ra.ec != std::errc() || rb.ec != std::errc() || ra.ptr != a.data() + a.size() ||
      rb.ptr != b.data() + b.size()) {
    return std::nullopt;
  }
  if (w < 20 || h < 10 || w > 20000 || h > 20000) return std::nullopt;
  return std::pair<int, int>{w, h};
}

std::optional<std::pair<std::optional<double>, std::optional<double>>> parse_window(std::string_view spec) {
  const std::size_t comma = spec.find(',');
  if (comma == std::string_view::npos) return std::nullopt;
  const std::string_view a = trim(spec.substr(0, comma)), b = trim(spec.substr(comma + 1));
  std::optional<double> from, to;
  if (!a.empty() && !(from = parse_seconds(a))) return std::nullopt;
  if (!b.empty() && !(to = parse_seconds(b))) return std::nullopt;
  if (!from && !to) return std::nullopt;
  if (from && to && !(*from < *to)) return std::nullopt;
  return std::pair{from, to};
}

std::string_view panel_name(Panel p) {
  switch (p) {
    case Panel::memory:
      return "memory";
    case Panel::gpu:
      return "gpu";
    case Panel::cpu:
      return "cpu";
    case Panel::io:
      return "io";
    case Panel::memory_kinds:
      return "memory-kinds";
    case Panel::tasks:
      return "tasks";
    case Panel::vsz:
      return "vsz";
    case Panel::gpu_util:
      return "gpu-util";
    case Panel::disk:
      return "disk";
  }
  return "memory";
}

std::optional<std::vector<Panel>> parse_panels(std::string_view spec) {
  std::vector<Panel> out;
  std::size_t start = 0;
  while (start <= spec.size()) {
    std::size_t end = spec.find(',', start);
    if (end == std::string_view::npos) end = spec.size();
    const std::string name = lower(trim(spec.substr(start, end - start)));
    std::optional<Panel> p;
    for (Panel candidate : {Panel::memory, Panel::gpu, Panel::cpu, Panel::io, Panel::memory_kinds, Panel::tasks,
                            Panel::vsz, Panel::gpu_util, Panel::disk}) {
      if (name == panel_name(candidate)) p = candidate;
    }
    if (!p) return std::nullopt;
    if (std::find(out.begin(), out.end(), *p) == out.end()) out.push_back(*p);
    start = end + 1;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

// The metrics plot draws: the rows with a series over time (dir:NAME apart), rss first, as mprof
// users read it.
static const std::vector<std::string_view>& series_metrics() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out{analysis::metric_row(analysis::MetricKind::rss).info.name};
    for (const analysis::MetricRow& r : analysis::metric_rows()) {
      const analysis::MetricKind kind = r.info.metric.kind;
      if (r.info.windowed && kind != analysis::MetricKind::dir && kind != analysis::MetricKind::rss) {
        out.push_back(r.info.name);
      }
    }
    return out;
  }();
  return names;
}

// Every trace must have the metric's series over time (the Failure names those it has).
static Result<void> check_metric(const std::vector<TraceData>& data, const std::string& metric) {
  const auto& series = series_metrics();
  const bool dir = metric.size() > 4 && metric.compare(0, 4, "dir:") == 0;
  if (!dir && std::find(series.begin(), series.end(), metric) == series.end()) {
    std::string names;
    for (std::string_view m : series) names += std::string(m) + ", ";
    return Failure{"--metric " + metric + ": one of " + names + "dir:NAME (series over time)"};
  }
  for (const TraceData& t : data) {
    if (metric_series_of(t, metric)) continue;
    std::string has;
    for (std::string_view m : series) {
      if (metric_series_of(t, m)) has += (has.empty() ? "" : ", ") + std::string(m);
    }
    for (const DirData& d : t.dirs) has += std::string(has.empty() ? "" : ", ") + "dir:" + d.info.path;
    // Nothing at all: every sample lies outside --window (reduce refuses a trace without any).
    if (has.empty())
      return Failure{t.path + ": no samples inside --window (its last is at " + human_seconds(t.t_end) +
                     " from its start)"};
    return Failure{t.path + ": no " + metric + " series (it has: " + has + ")"};
  }
  return {};
}

// --metric left out: the rule every command follows (analysis::choose_metric), on the series
// the traces hold. plot --sum's own sum is no trace given: the note counts the files.
static void resolve_metric(const std::vector<Input>& inputs, const std::vector<TraceData>& data, PlotOptions& o) {
  if (!o.metric.empty()) return;
  std::size_t given = 0, without = 0, without_any = 0;
  for (std::size_t i = 0; i < data.size(); ++i) {
    const bool lacks = !metric_series_of(data[i], "footprint");
    without_any += lacks ? 1 : 0;
    if (i < inputs.size() && inputs[i].sum_of_others) continue;
    ++given;
    without += lacks ? 1 : 0;
  }
  const std::string who =
      given <= 1 ? "this trace" : std::to_string(without) + " of the " + std::to_string(given) + " traces";
  const analysis::MetricChoice chosen = analysis::choose_metric(std::nullopt, without_any == 0, who);
  o.metric = std::string(analysis::metric_info(chosen.metric).name);
  o.metric_fallback = chosen.fallback;
}

namespace {

// What a chart needs before a trace is read: its format, gnuplot, the styles, and the output
// opened (a folder that cannot be written to is found before a long trace is read).
struct Setup {
  Format format = Format::png;
  std::string gnuplot;
  std::vector<StyleSource> styles;
  std::unique_ptr<OutputFile> out;  // none for a text chart
};

Result<Setup> set_up(const std::vector<Input>& inputs, const PlotOptions& o) {
  if (inputs.empty()) return Failure{"no trace to plot"};
  const std::optional<Format> format = format_for(o.output);
  if (!format) {
    return Failure{"cannot tell the format of '" + o.output +
                   "': the output must end in .png, .svg or .pdf (or be - for a text chart)"};
  }
  Setup setup;
  setup.format = *format;
  Result<std::string> gnuplot = find_gnuplot(o.gnuplot, "qprof plot");
  if (!gnuplot) return gnuplot.failure();
  setup.gnuplot = std::move(*gnuplot);
  setup.styles.push_back(default_style());
  if (!o.style.empty()) {
    Result<std::string> style = read_style(o.style);
    if (!style) return style.failure();
    setup.styles.push_back({o.style, std::move(*style)});
  }
  if (setup.format != Format::text) {
    Result<std::unique_ptr<OutputFile>> opened = OutputFile::open(o.output);
    if (!opened) return opened.failure();
    setup.out = std::move(*opened);
  }
  return setup;
}

// Each trace reduced to `ro`'s columns, the metric resolved (into `o`) and checked.
Result<std::vector<TraceData>> reduce_all(const std::vector<Input>& inputs, const ReduceOptions& ro, PlotOptions& o) {
  std::vector<TraceData> data;
  data.reserve(inputs.size());
  for (const Input& in : inputs) {
    ReduceOptions one = ro;
    one.t0 = in.t0;
    one.warn_incomplete = !in.sum_of_others;
    Result<TraceData> reduced = reduce_file(in.path, one, o.warn);
    if (!reduced) return reduced.failure();
    if (in.sum_of_others) reduced->path = in.label;  // its file is a descriptor's: said by what it is
    data.push_back(std::move(*reduced));
  }
  resolve_metric(inputs, data, o);
  if (Result<void> checked = check_metric(data, o.metric); !checked) return checked.failure();
  return data;
}

// gnuplot's dumb terminal pads every line to the chart's width and ends on padding without a
// newline: the shell's prompt then lands on the chart's last line, and wc -l counts one short.
// Each line less its trailing spaces, no blank lines at the end, and a newline after the last.
std::string text_chart_lines(const std::string& drawn) {
  std::string out;
  std::size_t from = 0;
  while (from < drawn.size()) {
    std::size_t end = drawn.find('\n', from);
    if (end == std::string::npos) end = drawn.size();
    std::size_t last = end;
    while (last > from && drawn[last - 1] == ' ') --last;
    out.append(drawn, from, last - from);
    out += '\n';
    from = end + 1;
  }
  while (out.size() > 1 && out.ends_with("\n\n")) out.pop_back();
  return out == "\n" ? std::string() : out;
}

// A text chart on stdout, through a temporary file: gnuplot 5.4's dumb terminal starts with a
// form feed, even with `nofeed`, which is not for a terminal or a pipe.
Result<void> draw_text(const Setup& setup, const Chart& chart, const PlotOptions& o) {
  FILE* chart_file = std::tmpfile();
  if (!chart_file) return Failure{std::string("cannot create a temporary file: ") + std::strerror(errno)};
  const Result<void> drawn = run_gnuplot(setup.gnuplot, write_script(chart, setup.styles, OutputTarget::fd3),
                                         fileno(chart_file), o.warn, o.render_timeout);
  std::string text;
  if (drawn) {
    std::rewind(chart_file);
    char buf[65536];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, chart_file)) > 0) text.append(buf, n);
  }
  std::fclose(chart_file);
  if (!drawn) return drawn;
  if (!text.empty() && text.front() == '\f') text.erase(0, 1);
  std::cout << text_chart_lines(text) << std::flush;
  return {};
}

// A chart file, put in place only when gnuplot drew it.
Result<void> draw_file(const Setup& setup, const Chart& chart, const PlotOptions& o) {
  OutputFile& out = *setup.out;
  const Result<void> drawn = run_gnuplot(setup.gnuplot, write_script(chart, setup.styles, OutputTarget::fd3), out.fd(),
                                         o.warn, o.render_timeout);
  if (!drawn) return drawn;
  // An empty chart never replaces a good one (a FIFO or a device has no size to look at).
  struct stat written {};
  if (out.replaces() && (::fstat(out.fd(), &written) != 0 || written.st_size == 0)) {
    return Failure{"gnuplot wrote nothing to " + o.output};
  }
  return out.commit();
}

// The chart's size as asked: a text chart without --size takes the terminal's; a height of 0
// is left to the panels (default_size).
std::pair<int, int> asked_size(const PlotOptions& o, Format format) {
  int width = o.width, height = o.height;
  if (format == Format::text && (width <= 0 || height <= 0)) {
    const auto rows = terminal_rows();
    // As wide as every text output: the terminal's, 80 into a pipe, or COLUMNS.
    width = width > 0 ? width : std::max(static_cast<int>(output_columns(STDOUT_FILENO)), 40);
    height = height > 0 ? height : rows ? std::max(*rows - 1, 12) : 32;
  }
  if (width <= 0) width = 1280;
  return {width, height};
}

// The chart's inputs: each trace's data, name and fitted trends (-s).
Result<std::vector<TraceInput>> trace_inputs(const std::vector<Input>& inputs, const std::vector<TraceData>& data,
                                             const PlotOptions& o) {
  std::vector<TraceInput> traces;
  const std::vector<std::string> labels = trace_labels(inputs, data);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    traces.push_back({&data[i], labels[i], inputs[i].faint, {}});
    try {
      if (o.trend) {
        const std::string& name = data[i].path;
        traces.back().trends = fitted_trends(inputs[i].path, data[i].t0, [&](const std::string& why) {
          if (o.warn) o.warn(name + ": " + why);
        });
      }
    } catch (const trace::ParseError& e) {  // the trace reader's boundary
      return Failure{e.what()};
    }
  }
  return traces;
}

// Whether each panel of a text chart holds its key between the key's top and the panel's foot
// (a key entry's lines are rows of their own).
bool keys_fit(const Chart& c) {
  for (const ChartPanel& p : c.panels) {
    if (!p.key) continue;
    std::size_t lines = 0;
    for (const ChartSeries& s : p.series) {
      if (!s.title.empty()) lines += 1 + s.title_more.size();
    }
    if (static_cast<double>(lines) > (p.key_y - p.box.bottom) * (c.height - 1) + 0.5) return false;
  }
  return true;
}

// The height of the panels the chart will draw.
int panels_height(const std::vector<TraceInput>& traces, const PlotOptions& o) {
  PlotOptions quiet = o;  // build_chart gives the warnings about panels
  quiet.warn = nullptr;
  const std::vector<Panel> panels = resolve_panels(traces, quiet);
  return default_size(panels, o.facet ? traces.size() : 1).second;
}

}  // namespace

Result<void> plot(const std::vector<Input>& inputs, const PlotOptions& options) {
  PlotOptions o = options;
  if (!o.warn) o.warn = [](const std::string&) {};
  Result<Setup> setup = set_up(inputs, o);
  if (!setup) return setup.failure();
  const Format format = setup->format;

  // Width first: the envelopes are as fine as the chart is wide.
  // Named, not a structured binding: the lambda below captures them (C++17 compilers refuse one).
  const std::pair<int, int> asked = asked_size(o, format);
  const int width = asked.first;
  int height = asked.second;
  ReduceOptions ro;
  ro.columns = static_cast<std::size_t>(std::max(width, 200));
  ro.from = o.from;
  ro.to = o.to;
  ro.children = o.children;
  Result<std::vector<TraceData>> data = reduce_all(inputs, ro, o);
  if (!data) return data.failure();
  const Result<std::vector<TraceInput>> traces = trace_inputs(inputs, *data, o);
  if (!traces) return traces.failure();

  if (height <= 0) height = panels_height(*traces, o);
  if (format == Format::text && o.height <= 0) {
    // A text chart's key entries take rows of their own: a chart of the height the terminal (or
    // a pipe's 32 rows) gives grows to the fewest rows in which every panel holds its key, as it
    // would grow wider for nothing: three facets in 32 rows left each key cut to its marks and a
    // second column unnamed.
    PlotOptions quiet = o;  // the chart built below gives the warnings
    quiet.warn = nullptr;
    const auto fits = [&](int rows) {
      const Result<Chart> c = build_chart(*traces, quiet, format, width, rows);
      return !c || keys_fit(*c);
    };
    constexpr int kMaxTextRows = 400;
    if (height < kMaxTextRows && !fits(height)) {
      int short_of = height, enough = std::min(height * 2, kMaxTextRows);
      while (enough < kMaxTextRows && !fits(enough)) {
        short_of = enough;
        enough = std::min(enough * 2, kMaxTextRows);
      }
      while (enough - short_of > 1) {
        const int mid = short_of + (enough - short_of) / 2;
        (fits(mid) ? enough : short_of) = mid;
      }
      height = enough;
    }
  }
  const Result<Chart> chart = build_chart(*traces, o, format, width, height);
  if (!chart) return chart.failure();

  if (!o.script.empty()) {
    const Script script = write_script(*chart, setup->styles,
                                       format == Format::text ? OutputTarget::stdout_ : OutputTarget::named, o.output);
    if (Result<void> saved = save_script(script, o.script); !saved) return saved;
  }
  return format == Format::text ? draw_text(*setup, *chart, o) : draw_file(*setup, *chart, o);
}

}  // namespace qprof::plot
