// qprof plot end to end: options → streamed reduction of each trace → chart → gnuplot.
#include "qprof/plot/plot.hpp"

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

#include "qprof/plot/chart.hpp"
#include "qprof/plot/gnuplot.hpp"
#include "qprof/plot/reduce.hpp"
#include "qprof/plot/script.hpp"

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
  s = trim(s);
  if (!s.empty() && s.back() == 's') s.remove_suffix(1);
  double v = 0;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || r.ec != std::errc() || r.ptr != s.data() + s.size() || !std::isfinite(v) || v < 0) {
    return std::nullopt;
  }
  return v;
}

// The terminal's size in characters, when stdout is one.
std::optional<std::pair<int, int>> terminal_size() {
  winsize ws{};
  if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0 && ws.ws_row > 0) {
    return std::pair<int, int>{ws.ws_col, ws.ws_row};
  }
  return std::nullopt;
}

std::string read_style(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw PlotError("--style " + path + ": " + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The chart's file while gnuplot draws it: a new file beside the target (same file system),
// created with the usual permissions (0666 less umask) and renamed over the target only by
// commit(), so that a failed chart never leaves half a file nor replaces a good one.
class PendingFile {
 public:
  explicit PendingFile(std::string target) : target_(std::move(target)) {
    const std::filesystem::path t(target_);
    const std::filesystem::path dir = t.has_parent_path() ? t.parent_path() : std::filesystem::path(".");
    std::random_device rd;
    for (int attempt = 0; attempt < 100 && fd_ < 0; ++attempt) {
      char suffix[24];
      std::snprintf(suffix, sizeof suffix, ".%08x.tmp", static_cast<unsigned>(rd()));
      path_ = (dir / ("." + t.filename().string() + suffix)).string();
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
      if (fd_ < 0 && errno != EEXIST) throw PlotError("cannot write " + target_ + ": " + std::strerror(errno));
    }
    if (fd_ < 0) throw PlotError("cannot write " + target_ + ": no free temporary name");
  }
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;
  ~PendingFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!committed_) ::unlink(path_.c_str());
  }
  int fd() const { return fd_; }

  void commit() {
    if (::fsync(fd_) != 0 && errno != EINVAL) throw PlotError("cannot write " + target_ + ": " + std::strerror(errno));
    ::close(fd_);
    fd_ = -1;
    struct stat st {};
    if (::stat(path_.c_str(), &st) != 0 || st.st_size == 0) throw PlotError("gnuplot wrote nothing to " + target_);
    if (::rename(path_.c_str(), target_.c_str()) != 0) {
      throw PlotError("cannot write " + target_ + ": " + std::strerror(errno));
    }
    committed_ = true;
  }

 private:
  std::string target_, path_;
  int fd_ = -1;
  bool committed_ = false;
};

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
    case Format::png: return "png";
    case Format::svg: return "svg";
    case Format::pdf: return "pdf";
    case Format::text: return "dumb";
  }
  return "png";
}

std::string default_label(std::string_view path) {
  std::string stem = std::filesystem::path(std::string(path)).stem().string();
  return stem.empty() ? std::string(path) : stem;
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
    case Panel::memory: return "memory";
    case Panel::gpu: return "gpu";
    case Panel::cpu: return "cpu";
    case Panel::io: return "io";
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
    for (Panel candidate : {Panel::memory, Panel::gpu, Panel::cpu, Panel::io}) {
      if (name == panel_name(candidate)) p = candidate;
    }
    if (!p) return std::nullopt;
    if (std::find(out.begin(), out.end(), *p) == out.end()) out.push_back(*p);
    start = end + 1;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

void plot(const std::vector<Input>& inputs, const PlotOptions& options) {
  PlotOptions o = options;
  if (!o.warn) o.warn = [](const std::string& w) { std::cerr << "qprof: warning: " << w << '\n'; };
  if (inputs.empty()) throw PlotError("no trace to plot");
  const std::optional<Format> format = format_for(o.output);
  if (!format) {
    throw PlotError("cannot tell the format of '" + o.output + "': the output must end in .png, .svg or .pdf (or be - for a text chart)");
  }
  const std::string gnuplot = find_program(o.gnuplot);
  if (gnuplot.empty()) {
    throw PlotError("qprof plot draws with gnuplot, and there is no '" + o.gnuplot +
                    "' on PATH: install the Debian package gnuplot-nox (apt-get install gnuplot-nox), or gnuplot");
  }
  std::vector<StyleSource> styles{default_style()};
  if (!o.style.empty()) styles.push_back({o.style, read_style(o.style)});
  // A folder that cannot be written to is found before a long trace is read.
  std::optional<PendingFile> out;
  if (*format != Format::text) out.emplace(o.output);

  // Width first: the envelopes are as fine as the chart is wide.
  int width = o.width, height = o.height;
  if (*format == Format::text && (width <= 0 || height <= 0)) {
    const auto term = terminal_size();
    width = width > 0 ? width : term ? std::max(term->first, 40) : 100;
    height = height > 0 ? height : term ? std::max(term->second - 1, 12) : 32;
  }
  if (width <= 0) width = 1280;

  ReduceOptions ro;
  ro.columns = static_cast<std::size_t>(std::max(width, 200));
  ro.from = o.from;
  ro.to = o.to;
  ro.children = o.children;
  std::vector<TraceData> data;
  data.reserve(inputs.size());
  for (const Input& in : inputs) data.push_back(reduce_file(in.path, ro, o.warn));
  std::vector<TraceInput> traces;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    traces.push_back({&data[i], inputs[i].label.empty() ? default_label(inputs[i].path) : inputs[i].label});
  }

  if (height <= 0) {
    PlotOptions quiet = o;  // build_chart gives the warnings about panels
    quiet.warn = nullptr;
    const std::vector<Panel> panels = resolve_panels(traces, quiet);
    height = default_size(panels, o.facet ? inputs.size() : 1).second;
  }
  const Chart chart = build_chart(traces, o, *format, width, height);

  if (!o.script.empty()) {
    save_script(write_script(chart, styles, *format == Format::text ? OutputTarget::stdout_ : OutputTarget::named,
                             o.output),
                o.script);
  }
  if (*format == Format::text) {
    // Through a temporary file: gnuplot 5.4's dumb terminal starts with a form feed, even with
    // `nofeed`, which is not for a terminal or a pipe.
    FILE* chart_file = std::tmpfile();
    if (!chart_file) throw PlotError(std::string("cannot create a temporary file: ") + std::strerror(errno));
    std::string text;
    try {
      run_gnuplot(gnuplot, write_script(chart, styles, OutputTarget::fd3), fileno(chart_file), o.warn);
      std::rewind(chart_file);
      char buf[65536];
      std::size_t n;
      while ((n = std::fread(buf, 1, sizeof buf, chart_file)) > 0) text.append(buf, n);
    } catch (...) {
      std::fclose(chart_file);
      throw;
    }
    std::fclose(chart_file);
    if (!text.empty() && text.front() == '\f') text.erase(0, 1);
    std::cout << text << std::flush;
    return;
  }
  run_gnuplot(gnuplot, write_script(chart, styles, OutputTarget::fd3), out->fd(), o.warn);
  out->commit();
}

}  // namespace qprof::plot
