// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/safe_text.hpp"
#include "profiled.hpp"
#include "qprof/analysis/catalog.hpp"
#include "qprof/analysis/dirs.hpp"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <new>
#include <stdexcept>

#include "qprof/common/clock.hpp"
#include "qprof/record/mark_channel.hpp"
#include "qprof/record/markers.hpp"
#include "qprof/common/units.hpp"
#include "stderr_speaker.hpp"

namespace qprof::cli {
using analysis::choose_metric;
using analysis::Metric;
using analysis::metric_names;
using analysis::MetricChoice;
using analysis::parse_growth;
using analysis::parse_metric;
using analysis::parse_percent;
using record::CgroupMode;
using record::detect_job;
using record::expand_output;
using record::MarkerMatcher;
using record::RunOptions;

namespace {

// The longest --timeout and --kill-after: about three years, far from where nanoseconds overflow.
constexpr double kLongestWait = 1e8;

}  // namespace

// A duration (parse_duration: 0.5, 10ms, 1m), finite and within [min, max] (`min` itself
// excluded unless `min_allowed`), handed on to the option as plain seconds. CLI11's own ranges
// let NaN through (every comparison with it is false).
CLI::Validator seconds_check(double min, double max, bool min_allowed) {
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        const auto v = parse_duration(s);
        if (v && std::isfinite(*v) && (*v > min || (min_allowed && *v == min)) && *v <= max) {
          char plain[64];
          std::snprintf(plain, sizeof plain, "%.17g", *v);
          s = plain;
          return "";
        }
        char range[96];
        std::snprintf(range, sizeof range, "%s %gs and at most %gs", min_allowed ? "at least" : "more than", min, max);
        // A duration out of range is said so first; the forms are for what is not one.
        if (v) return "'" + s + "' is out of range: " + range;
        return "'" + s + "' is not " + duration_forms() + "; " + range;
      },
      "DURATION");
}

namespace {

// --mark-fifo: refused now, not later by each writer in turn (under -q, unseen); made absolute.
CLI::Validator mark_fifo_check() {
  return CLI::Validator(
      [](std::string& path) -> std::string {
        const Result<std::string> place = record::mark_fifo_place(path);
        if (!place) return place.failure().message;
        path = *place;
        return "";
      },
      "PATH");
}

}  // namespace

void add_sampling_options(CLI::App& app, RunOptions& o) {
  app.add_option("-i,--interval,-T", o.interval, "Seconds between samples (default 0.01)")
      ->transform(seconds_check(0.0001, 3600.0));
  app.add_option("--timeout", o.timeout, "After this many seconds, SIGTERM the tree (then SIGKILL)")
      ->transform(seconds_check(0.0, kLongestWait, false));
  app.add_option("--kill-after", o.kill_grace, "Grace period between SIGTERM and SIGKILL after --timeout (default 5)")
      ->transform(seconds_check(0.0, kLongestWait));
  app.add_flag("--no-wait-daemons{false}", o.wait_daemons,
               "Stop when CMD exits, even if processes it started keep running");
  app.add_option_function<std::string>(
         "--cgroup",
         [&o](const std::string& mode) {
           o.cgroup = mode == "off" ? CgroupMode::off : mode == "on" ? CgroupMode::on : CgroupMode::automatic;
         },
         "auto (default), on or off (a bare --cgroup: on): run the tree in a memory cgroup of its own, whose charge "
         "is the footprint with shared pages counted once, as a cgroup limit counts them. auto: where qprof may "
         "create one (root, a delegated cgroup v2 subtree); -v says why not elsewhere")
      ->expected(0, 1)
      ->default_str("on")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  app.add_flag("--pss,!--no-pss", o.record_pss,
               "Read PSS/USS (smaps_rollup), the default: every --pss-interval and at each new high of Σ RSS (at "
               "most every 0.1 s), within 5 % of the time. --no-pss: not at all (no footprint without a cgroup)");
  app.add_option("--marker-regex", o.marker_regex,
                 "Regular expression (PCRE2, Perl's syntax) with one capture group (the label) for marker lines on "
                 "stderr (default: a line holding QPROF_MARK: anywhere; the label is what follows it). Each line "
                 "gets at most 100000 matching steps: on a line where the pattern backtracks catastrophically it "
                 "gives up (no marker; counted in the summary)");
  app.add_option("--mark-fifo", o.mark_fifo,
                 "Create the marker FIFO (QPROF_MARK_PATH) at PATH rather than in a private temporary directory, so "
                 "that writers know it beforehand (qprof attach -q prints nothing); PATH must not exist (a relative "
                 "one is made absolute), and is removed at the end. Its directory must be one the writers accept: "
                 "qprof's user's or root's, changed by no one else unless sticky (as /tmp)")
      ->type_name("PATH")
      ->transform(mark_fifo_check());
  app.add_option("--pss-interval", o.pss_interval,
                 "Seconds between scheduled PSS/USS passes (default 0.1; a slow pass stretches it so that passes take "
                 "at most 5 % of the time; a tree that did not change since the last pass is read once a second)")
      ->transform(seconds_check(0.001, 3600.0));
  app.add_option("--stats-interval", o.stats_interval,
                 "Seconds between CPU, disk I/O and high-water-mark readings (default 0.1, never below --interval)")
      ->transform(seconds_check(0.001, 3600.0));
  app.add_option("--gpu", o.gpu, "GPU memory source: auto (default: the first that works), nvml, amd, smi, none")
      ->check(CLI::IsMember({"auto", "nvml", "amd", "smi", "none"}));
  app.add_flag("-v,--verbose", o.verbose,
               "Also say what is normal: which GPU backends were tried and why none was found");
  app.add_option(
         "--gpu-interval", o.gpu_interval,
         "Seconds between per-process GPU queries (default 0.1; stretched to keep GPU queries under 2 % of a core)")
      ->transform(seconds_check(0.001, 3600.0));
  app.add_option("--watch-dir", o.watch_dirs,
                 "Also record the size of DIR over time (apparent and allocated bytes, growth, its file system's free "
                 "space; repeatable; also $QPROF_WATCH_DIRS, colon-separated)")
      ->type_name("DIR")
      ->allow_extra_args(false);
  app.add_option(
         "--watch-interval", o.watch_interval,
         "Seconds between walks of the --watch-dir directories (default 1; stretched to keep walks under 2 % of "
         "a core)")
      ->transform(seconds_check(0.01, 3600.0));
  app.add_option("--host-name", o.identity.host,
                 "The host name in the trace's header and in -o's %h (default: $QPROF_HOSTNAME, else the machine's)");
}

Result<void> resolve_job(RunOptions& o, std::string_view who) {
  // Directories to watch from the environment, after those of the command line.
  if (const char* env = std::getenv("QPROF_WATCH_DIRS")) {
    std::string_view rest(env);
    while (!rest.empty()) {
      const std::size_t colon = rest.find(':');
      if (const std::string_view d = rest.substr(0, colon); !d.empty()) o.watch_dirs.emplace_back(d);
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
  }
  o.identity = detect_job(o.identity.host);
  for (const std::string& w : o.identity.warnings) stderr_speaker(std::string(who)).line("warning: " + w);
  if (o.output.find('%') == std::string::npos) return {};
  const auto expanded = expand_output(o.output, o.identity, ::getpid(), WallAnchor().unix_at(monotonic_ns()));
  if (!expanded) return expanded.failure();
  o.output = *expanded;
  return {};
}

void record_metric(RunOptions& o, const std::string& metric) {
  o.metric = metric == "pss" || metric == "uss" || metric == "all" ? metric : "rss";
}

Result<void> check_sampling_options(const RunOptions& o) {
  if (!o.marker_regex) return {};
  if (Result<MarkerMatcher> check = MarkerMatcher::compile(*o.marker_regex); !check) {
    return Failure{"--marker-regex: " + terminal_text(check.failure().message)};
  }
  return {};
}

CLI::Validator size_check() {
  return CLI::Validator(
      [](std::string& s) -> std::string { return parse_size(s) ? "" : "'" + s + "' is not " + size_forms(); }, "SIZE");
}

CLI::Validator factor_check(double min, double max) {
  return CLI::Validator(
      [=](std::string& s) -> std::string {
        std::string_view text = s;
        for (std::string_view times : {"x", "X", "×"}) {
          if (text.ends_with(times)) text.remove_suffix(times.size());
        }
        double v = 0;
        const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
        if (!text.empty() && r.ec == std::errc() && r.ptr == text.data() + text.size() && std::isfinite(v) &&
            v >= min && v <= max) {
          s = std::string(text);
          return "";
        }
        char range[64];
        std::snprintf(range, sizeof range, "%g and %g", min, max);
        return "'" + s + "' is not a factor between " + range + " (4 or 4x)";
      },
      "FACTOR");
}

CLI::Validator budget_check() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        return parse_size(s) || parse_percent(s)
                   ? ""
                   : "'" + s + "' is neither a percentage of the memory limit (90%) nor " + size_forms();
      },
      "SIZE|PCT");
}

CLI::Validator growth_check() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        return parse_growth(s) ? "" : "'" + s + "' is neither a percentage (10%) nor " + size_forms();
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
        return parse_display_unit(s) ? ""
                                     : "unknown unit '" + s + "' (units: B KiB MiB GiB KB MB GB, or K M G: binary)";
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

std::optional<Metric> asked_metric(const std::string& name) {
  if (name.empty()) return std::nullopt;
  return parse_metric(name);
}

MetricChoice metric_for(const std::string& name, const std::vector<const trace::Trace*>& traces) {
  return choose_metric(asked_metric(name), traces);
}

MetricChoice metric_for(const std::string& name, const trace::Trace& trace) {
  return choose_metric(asked_metric(name), trace);
}

std::string metric_label(const std::string& name) { return name.empty() ? "the footprint" : "--metric " + name; }

std::optional<Unit> unit_of(const std::string& name) {
  if (name.empty()) return std::nullopt;
  return parse_display_unit(name);
}

report::Format format_of(const std::string& name) { return report::parse_format(name).value_or(report::Format::text); }

// The newest trace of a default name (qprof_*.dat or mprofile_*.dat, as `qprof list` sees them)
// of the current directory, as mprof peak does.
std::optional<std::string> newest_trace() {
  // By the time in the names, as qprof list orders them (its last row) and mprof takes its last
  // file: a file's write time moves when it is copied or touched, its name does not.
  std::vector<std::string> traces;
  try {
    traces = analysis::default_traces(".");
  } catch (const std::filesystem::filesystem_error&) {
    return std::nullopt;  // an unreadable directory has no trace to take
  }
  if (traces.empty()) return std::nullopt;
  return std::filesystem::path(traces.back()).filename().string();
}

std::string read_failure(const std::exception& e, const std::string& file) {
  if (dynamic_cast<const std::bad_alloc*>(&e)) return file + ": too large to read into memory";
  return e.what();
}

}  // namespace qprof::cli
