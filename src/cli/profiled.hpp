// SPDX-License-Identifier: Apache-2.0
// What the subcommands that run a command or read traces share: the run options, validators
// for sizes, metrics, units and formats, and keeping the profiled command's stdout off ours.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "qprof/analysis/default_metric.hpp"
#include "qprof/analysis/metric.hpp"
#include "qprof/common/failure.hpp"
#include "qprof/common/stdout_to_stderr.hpp"
#include "qprof/report/report.hpp"
#include "qprof/record/options.hpp"

namespace qprof::cli {

// How to sample and follow the tree: the options `run`, `peak -- CMD` and `compare --run` share.
void add_sampling_options(CLI::App& app, record::RunOptions& o);
// Reads the launcher's ranks (torchrun, mpirun, srun) into o.identity and expands -o's
// placeholders (%h %r %l %w %p %t %j %%); fails when one cannot be filled. Its warnings are
// printed as "qprof WHO: warning: …".
Result<void> resolve_job(record::RunOptions& o, std::string_view who);
// What the run records for --metric: pss, uss and all start the PSS thread; the others (rss,
// gpu, cgroup, …) are recorded anyway or by their own option.
void record_metric(record::RunOptions& o, const std::string& metric);
// Checks what CLI11 cannot (the marker regex).
Result<void> check_sampling_options(const record::RunOptions& o);

// The newest qprof_*.dat or mprofile_*.dat of the current directory, as mprof peak and plot take
// it when no file is named.
std::optional<std::string> newest_trace();

// CLI11 checks that make a bad value a usage error (status 2) before anything runs.
// A duration (10ms, 0.5s, 1m, 0.5) within [min, max] (min excluded unless min_allowed); a
// transform: the option receives plain seconds.
CLI::Validator seconds_check(double min, double max, bool min_allowed = true);
CLI::Validator size_check();  // parse_size: 4GiB, 512MB, 512 (MiB)
// A factor within [min, max], "4" or "4x" (as a slowdown is said); the option receives the number.
CLI::Validator factor_check(double min, double max);
CLI::Validator growth_check();      // 10%, 200MiB
CLI::Validator budget_check();      // a size, or 90% (of the memory limit the trace recorded)
CLI::Validator metric_check();      // rss, pss, …
CLI::Validator run_metric_check();  // the same, or all
CLI::Validator unit_check();        // B, KiB, MiB, GiB, KB, MB, GB
CLI::Validator format_check();      // text, md, csv, json

// What --metric names (the option has been checked): nullopt where it was left out ("").
std::optional<analysis::Metric> asked_metric(const std::string& name);
// The metric of --metric, or where it was left out the traces' default (analysis::choose_metric:
// the footprint where recorded, else Σ RSS with the reason to say).
analysis::MetricChoice metric_for(const std::string& name, const std::vector<const trace::Trace*>& traces);
analysis::MetricChoice metric_for(const std::string& name, const trace::Trace& trace);
// How messages name the metric asked for: "--metric pss", or "the footprint" (the default).
std::string metric_label(const std::string& name);
std::optional<Unit> unit_of(const std::string& name);
// Why reading `file` failed, for "qprof CMD: …": out of memory is "FILE: too large to read into
// memory" (exit 2, as a bad trace), never std::bad_alloc's own words or an abort.
std::string read_failure(const std::exception& e, const std::string& file);  // empty name: nullopt
report::Format format_of(const std::string& name);

}  // namespace qprof::cli
