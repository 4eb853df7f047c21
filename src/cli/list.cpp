// SPDX-License-Identifier: Apache-2.0
// qprof list [FILE|DIR...] [--dir DIR]: the default-named traces of a directory (as mprof list),
// oldest first, or the files named, with their date, duration, peak and command under a header;
// each trace is streamed, never held.
#include <unistd.h>

#include <algorithm>
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "qprof/common/safe_text.hpp"
#include "qprof/common/text_wrap.hpp"
#include "commands.hpp"
#include "qprof/analysis/catalog.hpp"
#include "qprof/analysis/default_metric.hpp"
#include "qprof/common/units.hpp"
#include "stderr_speaker.hpp"

namespace qprof::cli {
using analysis::default_traces;
using analysis::summarize_trace;
using analysis::TraceListing;
namespace {

struct ListCli {
  std::string dir = ".";
  std::string metric;              // empty: the footprint where recorded, else Σ RSS (marked); rss: Σ RSS
  std::vector<std::string> paths;  // files (listed as given) and directories (their default names)
};

// What `list` looks for in a directory, said when it finds none of it.
constexpr const char* kLooksFor =
    "qprof_*.dat and mprofile_*.dat (the names qprof run and mprof run give, with the date); "
    "to list traces named with -o, pass the files: qprof list DIR/*.dat";

struct Row {
  std::string index, name, start, duration, peak, command;
};

std::string local_time(std::optional<Seconds> t) {
  if (!t) return "-";
  const std::time_t s = static_cast<std::time_t>(*t);
  std::tm tm{};
  ::localtime_r(&s, &tm);
  std::ostringstream out;
  out << std::put_time(&tm, "%Y-%m-%d %H:%M:%S");
  return out.str();
}

// A command line from someone else's trace reaches a terminal: no control characters.
std::string printable(std::string_view s) {
  std::string out;
  for (unsigned char c : s) out += c < 0x20 || c == 0x7f ? '?' : static_cast<char>(c);
  return out;
}

// The traces to list: each FILE as given, each DIR's default-named traces; --dir's when no path
// is given. A directory without one is said on stderr, with the names it looks for.
Result<std::vector<std::string>> traces_to_list(const ListCli& o) {
  const std::vector<std::string> given = o.paths.empty() ? std::vector<std::string>{o.dir} : o.paths;
  std::vector<std::string> traces;
  for (const std::string& p : given) {
    std::error_code ec;
    if (!std::filesystem::is_directory(p, ec)) {
      traces.push_back(p);  // a file: any name; summarize_trace says why one cannot be read
      continue;
    }
    std::vector<std::string> found;
    try {
      found = default_traces(p);
    } catch (const std::exception& e) {
      return Failure{terminal_text(e.what())};
    }
    if (found.empty()) stderr_speaker("list").line("no traces in " + terminal_text(p) + ": it looks for " + kLooksFor);
    traces.insert(traces.end(), found.begin(), found.end());
  }
  return traces;
}

// PEAK: the footprint where the trace recorded it (the rule of analysis::choose_metric), else Σ
// RSS marked "*" and said under the table (`fallback`); --metric rss: Σ RSS, as mprof lists it.
std::string peak_cell(const TraceListing& l, const ListCli& o, std::string& fallback) {
  const auto chosen = analysis::choose_metric(o.metric == "rss" ? std::optional(analysis::Metric::rss) : std::nullopt,
                                              l.footprint.has_value());
  if (chosen.metric == analysis::Metric::footprint) return human_bytes(*l.footprint);
  if (!l.peak) return "-";
  if (chosen.fallback.empty()) return human_bytes(*l.peak);
  fallback = chosen.fallback;
  return human_bytes(*l.peak) + "*";
}

Result<int> list_action(const ListCli& o) {
  if (!o.paths.empty() && o.dir != ".") return Failure{"give --dir DIR or paths (files, directories), not both"};
  const auto paths = traces_to_list(o);
  if (!paths) return paths.failure();
  int status = 0;
  std::vector<Row> rows;
  std::string fallback;     // why a row's PEAK is Σ RSS
  std::size_t marked = 0;   // rows whose PEAK is Σ RSS, marked
  bool all_default = true;  // every name a default one (qprof_…, mprofile_…: it holds the start)
  for (const std::string& path : *paths) {
    TraceListing l;
    try {
      l = summarize_trace(path);
    } catch (const std::exception& e) {
      stderr_speaker("list").line(terminal_text(e.what()));
      status = kUsageError;
      continue;
    }
    // Cut short, or runs appended: said as every command that reads the trace says it.
    for (const std::string& n : trace::reading_notices(path, l.completeness)) stderr_speaker("list").line(n);
    // A directory's traces by their file name (as mprof list); files as they were given.
    const std::string name = o.paths.empty() ? std::filesystem::path(path).filename().string() : path;
    all_default = all_default && analysis::is_default_trace_name(std::filesystem::path(path).filename().string());
    rows.push_back({std::to_string(rows.size()), printable(name), local_time(l.start), human_seconds(l.duration),
                    peak_cell(l, o, fallback), printable(l.command)});
    marked += rows.back().peak.ends_with("*");
  }
  if (rows.empty()) return status;
  // A footprint beside a marked Σ RSS: its digits in the same column.
  if (!fallback.empty()) {
    for (Row& r : rows) {
      if (!r.peak.ends_with("*")) r.peak += " ";
    }
  }
  // Columns as wide as their widest cell: qprof_ names are longer than mprofile_ ones.
  Row width{"#", "NAME", "START", "DURATION", o.metric == "rss" ? "PEAK RSS" : "PEAK", "COMMAND"};
  std::size_t w[5] = {width.index.size(), width.name.size(), width.start.size(), width.duration.size(),
                      width.peak.size()};
  const auto cells = [](const std::string& s) { return text_columns(s); };  // "µs": one column, two bytes
  for (const Row& r : rows) {
    w[0] = std::max(w[0], cells(r.index));
    w[1] = std::max(w[1], cells(r.name));
    w[2] = std::max(w[2], cells(r.start));
    w[3] = std::max(w[3], cells(r.duration));
    w[4] = std::max(w[4], cells(r.peak));
  }
  // The command fills what the terminal has left (80 columns into a pipe), cut with "..."; where
  // that leaves it too little and every name is a default one, START goes first (the name holds
  // the same time). The names stay whole: they are what a user passes on, so a row of long ones
  // may still be wider.
  constexpr std::size_t kCommandAtLeast = 12;
  const std::size_t columns = output_columns(STDOUT_FILENO);
  std::size_t before_command = w[0] + w[1] + w[2] + w[3] + w[4] + 5 * 2;
  const bool show_start = before_command + kCommandAtLeast <= columns || !all_default;
  if (!show_start) before_command -= w[2] + 2;
  const std::size_t command_width = std::max(kCommandAtLeast, columns > before_command ? columns - before_command : 0);
  for (Row& r : rows) r.command = cut_to_columns(r.command, command_width);
  const auto left = [&](const std::string& s, std::size_t n) { return s + std::string(n - cells(s), ' '); };
  const auto right = [&](const std::string& s, std::size_t n) { return std::string(n - cells(s), ' ') + s; };
  const auto print = [&](const Row& r) {
    std::cout << left(r.index, w[0]) << "  " << left(r.name, w[1]) << "  "
              << (show_start ? left(r.start, w[2]) + "  " : std::string()) << right(r.duration, w[3]) << "  "
              << right(r.peak, w[4]) << "  " << r.command << '\n';
  };
  print(width);
  for (const Row& r : rows) print(r);
  if (!show_start) std::cout << "START left out to fit " << columns << " columns: each name holds it\n";
  if (marked > 1) fallback = analysis::choose_metric(std::nullopt, false, "these traces").fallback;
  if (!fallback.empty()) std::cout << fit_lines("*: " + fallback, columns);
  return status;
}

}  // namespace

Command add_list(CLI::App& app, const Invocation&) {
  auto opts = std::make_shared<ListCli>();
  CLI::App* cmd = app.add_subcommand("list", "List the traces of a directory: name, date, duration, peak, command");
  cmd->footer(
      "Usage: qprof list [OPTIONS] [FILE|DIR...]\n"
      "In a directory (default: the current one), lists files named as qprof run and mprof run name them\n"
      "by default (qprof_YYYYMMDDhhmmss.mmm_PID.dat, with host and rank under a launcher;\n"
      "mprofile_YYYYMMDDhhmmss.dat), oldest first, with an index (0: the oldest) as mprof list does.\n"
      "Traces named otherwise (-o) are listed when given as files. A directory with none is said on stderr.\n"
      "PEAK: the footprint (shared pages once) where the trace recorded it, else Σ RSS marked *.\n"
      "Exit status 2 when a trace cannot be read (the others are still listed).");
  cmd->add_option("paths", opts->paths, "Trace files (any name) and directories (their default-named traces)");
  cmd->add_option("--dir", opts->dir, "Directory to look in (default: the current directory)");
  cmd->add_option("--metric", opts->metric,
                  "PEAK's figure: footprint (default: where recorded, else Σ RSS) or rss (Σ RSS, as mprof lists it)")
      ->check(CLI::IsMember({"footprint", "rss"}));
  return {cmd, [opts] { return list_action(*opts); }};
}

}  // namespace qprof::cli
