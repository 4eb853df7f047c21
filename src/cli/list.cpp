// SPDX-License-Identifier: Apache-2.0
// qprof list [--dir DIR]: the default-named traces of a directory (as mprof list), oldest first,
// with their date, duration, peak and command; each trace is streamed, never held.
#include <ctime>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>

#include "qprof/common/safe_text.hpp"
#include "commands.hpp"
#include "qprof/analysis/catalog.hpp"
#include "qprof/common/units.hpp"

namespace qprof::cli {
namespace {

struct ListCli {
  std::string dir = ".";
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

Result<int> list_action(const ListCli& o) {
  std::vector<std::string> paths;
  try {
    paths = default_traces(o.dir);
  } catch (const std::exception& e) {
    return Failure{terminal_text(e.what())};
  }
  int status = 0;
  std::size_t index = 0;
  for (const std::string& path : paths) {
    TraceListing l;
    try {
      l = summarize_trace(path);
    } catch (const std::exception& e) {
      std::cerr << "qprof list: " << terminal_text(e.what()) << '\n';
      status = kUsageError;
      continue;
    }
    const std::string name = std::filesystem::path(path).filename().string();
    std::cout << std::left << std::setw(3) << index++ << ' ' << std::setw(28) << printable(name) << ' '
              << local_time(l.start) << "  " << std::right << std::setw(9) << human_seconds(l.duration) << "  "
              << std::setw(10) << (l.peak ? human_bytes(*l.peak) : "-") << "  " << printable(l.command) << '\n';
  }
  return status;
}

}  // namespace

Command add_list(CLI::App& app, const Invocation&) {
  auto opts = std::make_shared<ListCli>();
  CLI::App* cmd = app.add_subcommand("list", "List the traces of a directory: name, date, duration, peak RSS, command");
  cmd->footer(
      "Usage: qprof list [--dir DIR]\n"
      "Lists files named as qprof run and mprof run name them by default (qprof_YYYYMMDDhhmmss.dat,\n"
      "mprofile_YYYYMMDDhhmmss.dat), oldest first, with an index (0: the oldest) as mprof list does.\n"
      "Exit status 2 when a trace cannot be read (the others are still listed).");
  cmd->add_option("--dir", opts->dir, "Directory to look in (default: the current directory)");
  return {cmd, [opts] { return list_action(*opts); }};
}

}  // namespace qprof::cli
