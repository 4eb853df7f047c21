// SPDX-License-Identifier: Apache-2.0
// qprof clean [--older-than AGE] [--keep N] [--dry-run] [--dir DIR]: removes default-named traces
// (as mprof clean), never any other file.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "qprof/common/number_text.hpp"
#include "qprof/common/safe_text.hpp"
#include "commands.hpp"
#include "qprof/common/units.hpp"
#include "qprof/analysis/catalog.hpp"
#include "stderr_speaker.hpp"

namespace qprof::cli {
using analysis::default_traces;
namespace {

namespace fs = std::filesystem;

// Whether a live `qprof run` writes `path`: it holds an flock on its trace for the whole run.
// The lock taken here (when free) is held by the returned descriptor until the file is removed,
// so that no run can take the file in between. -1: locked by a run; -2: it could not be opened
// (a run's own checks then say why).
int lock_unless_live(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return -2;
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return fd;
  ::close(fd);
  return -1;
}

struct CleanCli {
  std::string dir = ".";
  std::string older_than;
  std::optional<std::size_t> keep;
  bool dry_run = false;
};

// "nothing to remove in DIR: 3 traces, none older than 2d": a clean that found nothing says so.
std::string nothing_removed(const CleanCli& o, std::size_t traces, std::size_t kept) {
  std::string why = traces == 0   ? "no trace of a default name"
                    : traces == 1 ? "1 trace"
                                  : std::to_string(traces) + " traces";
  if (traces > 0 && kept == traces)
    why += ", all kept by --keep";
  else if (traces > 0 && !o.older_than.empty())
    why += ", none older than " + o.older_than;
  return "nothing to remove in " + terminal_text(o.dir) + ": " + terminal_text(why) + "\n";
}

// --older-than's age; nullopt without it. Elsewhere a bare number is seconds and `m` a minute (an
// interval); here they remove files, and "5" may mean days, "6m" months: both refused, decided on
// the parse (whatever blanks around it).
Result<std::optional<Seconds>> age_of(const std::string& older_than) {
  if (older_than.empty()) return std::optional<Seconds>{};
  const std::string said = "--older-than " + terminal_text(older_than);
  const auto parts = duration_parts(older_than);
  if (!parts) return Failure{said + ": expected an age with its unit: 90s, 30min, 12h, 7d, 2w (units s, min, h, d, w)"};
  const std::string n = printf_number("%g", parts->first);
  if (parts->second.empty()) {
    return Failure{said + ": give the age with its unit (" + n + "s, " + n + "min, " + n +
                   "d): a bare number would remove files by a guess"};
  }
  if (parts->second == "m") {
    return Failure{said + ": m could be minutes or months: write " + n +
                   "min for minutes, days for months (30d a month)"};
  }
  return parse_duration(older_than);
}

Result<int> clean_action(const CleanCli& o) {
  const Speaker say = stderr_speaker("clean");
  const Result<std::optional<Seconds>> age = age_of(o.older_than);
  if (!age) return age.failure();
  std::vector<std::string> paths;
  try {
    paths = default_traces(o.dir);
  } catch (const std::exception& e) {
    return Failure{terminal_text(e.what())};
  }
  const std::size_t keep = std::min(paths.size(), o.keep.value_or(0));
  const double now = static_cast<double>(std::time(nullptr));
  int status = 0;
  std::size_t said = 0;                                    // files removed, or that would be, or kept with a reason
  for (std::size_t i = 0; i + keep < paths.size(); ++i) {  // the newest `keep` are last
    const std::string& p = paths[i];
    // Age, as the order of --keep and of qprof list, is from the run's start that the name holds:
    // a copy keeps it, where a copy's time of last write would say "new".
    if (*age) {
      const auto started = analysis::name_start_time(fs::path(p).filename().string());
      if (!started) {
        std::cout << "kept " << terminal_text(p) << ": its name holds no date to tell its age\n";
        ++said;
        continue;
      }
      if (now - *started < **age) continue;
    }
    const int lock = lock_unless_live(p);
    if (lock == -1) {
      std::cout << "kept " << terminal_text(p) << ": a qprof run is still writing it\n";
      ++said;
      continue;
    }
    if (o.dry_run) {
      if (lock >= 0) ::close(lock);
      std::cout << "would remove " << terminal_text(p) << '\n';
      ++said;
      continue;
    }
    std::error_code ec;
    const bool removed = fs::remove(p, ec) || !ec;
    if (lock >= 0) ::close(lock);
    if (!removed) {
      say.line(p + ": " + ec.message());
      status = 1;
      continue;
    }
    std::cout << "removed " << terminal_text(p) << '\n';
    ++said;
  }
  // Silence would read as "done"; say why nothing went.
  if (said == 0 && status == 0) std::cout << nothing_removed(o, paths.size(), keep);
  return status;
}

}  // namespace

Command add_clean(CLI::App& app, const Invocation&) {
  auto opts = std::make_shared<CleanCli>();
  CLI::App* cmd = app.add_subcommand("clean", "Remove the traces of a directory (default names only), as mprof clean");
  cmd->footer(
      "Usage: qprof clean [--older-than AGE] [--keep N] [--dry-run] [--dir DIR]\n"
      "Only files named as qprof run and mprof run name them by default are removed (see qprof list);\n"
      "without --older-than or --keep, all of them, oldest first. Age and order are from the run's\n"
      "start that each name holds (local time, as qprof list shows it), the same in a copy of\n"
      "the file: a long run that ended just now is as old as its start.\n"
      "A trace that a qprof run is still writing (it holds its lock) is kept and said so.\n"
      "Exit status 1 when a file could not be removed, 2 for usage errors.");
  cmd->add_option("--dir", opts->dir, "Directory to clean (default: the current directory)");
  cmd->add_option("--older-than", opts->older_than,
                  "Only traces of runs started longer ago than AGE, with its unit: 90s, 30min, 12h, 7d, 2w");
  // Digits only, within 64 bits: CLI11 alone took -1 (wrapped) and 20 digits (saturated) but not 1e20.
  cmd->add_option("--keep", opts->keep, "Keep the N newest traces (the last N of qprof list)")
      ->check([](const std::string& s) -> std::string {
        std::uint64_t n = 0;
        const auto r = std::from_chars(s.data(), s.data() + s.size(), n);
        if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || r.ec != std::errc() ||
            r.ptr != s.data() + s.size()) {
          return "a whole number of traces, 0 or more, up to 18446744073709551615";
        }
        return "";
      });
  cmd->add_flag("--dry-run", opts->dry_run, "Print what would be removed, remove nothing");
  return {cmd, [opts] { return clean_action(*opts); }};
}

}  // namespace qprof::cli
