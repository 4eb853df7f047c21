#include "profiled.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <stdexcept>

#include "qprof/record/markers.hpp"
#include "qprof/common/units.hpp"

namespace qprof::cli {

void add_sampling_options(CLI::App& app, RunOptions& o) {
  app.add_option("-i,--interval,-T", o.interval, "Seconds between samples (default 0.01)")->check(CLI::Range(0.0001, 3600.0));
  app.add_option("--timeout", o.timeout, "After this many seconds, SIGTERM the tree (then SIGKILL)")->check(CLI::PositiveNumber);
  app.add_option("--kill-after", o.kill_grace, "Grace period between SIGTERM and SIGKILL after --timeout (default 5)")
      ->check(CLI::NonNegativeNumber);
  app.add_flag("--no-wait-daemons{false}", o.wait_daemons, "Stop when CMD exits, even if processes it started keep running");
  app.add_flag("--cgroup", o.cgroup,
               "Put the tree in a cgroup of its own: exact membership and exact tree peak (needs root)");
  app.add_option("--marker-regex", o.marker_regex,
                 "Regular expression with one capture group (the label) for marker lines on stderr "
                 "(default: lines starting with QPROF_MARK:)");
  app.add_option("--pss-interval", o.pss_interval,
                 "Seconds between PSS/USS passes (default 0.1; a slow pass stretches it so that passes take at "
                 "most 5 % of the time)")
      ->check(CLI::Range(0.001, 3600.0));
  app.add_option("--stats-interval", o.stats_interval,
                 "Seconds between CPU, disk I/O and high-water-mark readings (default 0.1, never below --interval)")
      ->check(CLI::Range(0.001, 3600.0));
  app.add_option("--gpu", o.gpu, "GPU memory source: auto (default: the first that works), nvml, amd, smi, none")
      ->check(CLI::IsMember({"auto", "nvml", "amd", "smi", "none"}));
  app.add_option("--gpu-interval", o.gpu_interval,
                 "Seconds between per-process GPU queries (default 0.1; stretched to keep GPU queries under 2 % of a core)")
      ->check(CLI::Range(0.001, 3600.0));
}

void record_metric(RunOptions& o, const std::string& metric) {
  o.metric = metric == "pss" || metric == "uss" || metric == "all" ? metric : "rss";
}

bool sampling_options_ok(const RunOptions& o, std::string_view who) {
  if (!o.marker_regex) return true;
  try {
    MarkerMatcher check(*o.marker_regex);
  } catch (const std::invalid_argument& e) {
    std::cerr << "qprof " << who << ": --marker-regex: " << e.what() << '\n';
    return false;
  }
  return true;
}

CLI::Validator size_check() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        return parse_size(s) ? "" : "'" + s + "' is not a size (4GiB, 512MiB, 2GB, 1048576; units KiB MiB GiB KB MB GB)";
      },
      "SIZE");
}

CLI::Validator growth_check() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        return parse_growth(s) ? "" : "'" + s + "' is neither a percentage (10%) nor a size (200MiB)";
      },
      "PCT|SIZE");
}

CLI::Validator metric_check() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        return parse_metric(s) ? "" : "unknown metric '" + s + "' (metrics: " + metric_names() + ")";
      },
      "METRIC");
}

CLI::Validator run_metric_check() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        return s == "all" || parse_metric(s) ? "" : "unknown metric '" + s + "' (metrics: all, " + metric_names() + ")";
      },
      "METRIC");
}

CLI::Validator unit_check() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        return parse_unit(s) ? "" : "unknown unit '" + s + "' (units: B KiB MiB GiB KB MB GB)";
      },
      "UNIT");
}

CLI::Validator format_check() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        return report::parse_format(s) ? "" : "unknown format '" + s + "' (formats: text, md, csv, json)";
      },
      "FORMAT");
}

Metric metric_of(const std::string& name) { return parse_metric(name).value_or(Metric::rss); }

std::optional<Unit> unit_of(const std::string& name) {
  if (name.empty()) return std::nullopt;
  return parse_unit(name);
}

report::Format format_of(const std::string& name) { return report::parse_format(name).value_or(report::Format::text); }

StdoutToStderr::StdoutToStderr() {
  std::cout.flush();
  std::fflush(stdout);
  saved_ = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (saved_ >= 0) ::dup2(STDERR_FILENO, STDOUT_FILENO);
}

StdoutToStderr::~StdoutToStderr() {
  if (saved_ < 0) return;
  std::cout.flush();
  std::fflush(stdout);
  ::dup2(saved_, STDOUT_FILENO);
  ::close(saved_);
}

}  // namespace qprof::cli
