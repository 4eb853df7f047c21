// SPDX-License-Identifier: Apache-2.0
// qprof report TRACE: the run's facts, its peaks and its stage table; --yaml for Quark's layout.
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <memory>

#include "qprof/common/output_file.hpp"
#include "qprof/common/safe_text.hpp"
#include "commands.hpp"
#include "qprof/common/text_wrap.hpp"
#include "profiled.hpp"
#include "qprof/trace/format.hpp"
#include "qprof/trace/completeness.hpp"
#include "qprof/report/job.hpp"
#include "qprof/report/quark_yaml.hpp"
#include "qprof/report/request.hpp"
#include "stderr_speaker.hpp"

namespace qprof::cli {
using analysis::Align;
using analysis::has_metric;
using analysis::has_series_over_time;
using analysis::Metric;
using analysis::metric_info;
using analysis::MetricChoice;
using trace::Trace;

namespace {

struct ReportCli {
  std::vector<std::string> traces;
  std::string format = "text";
  std::string unit;
  std::string metric;  // empty: the footprint where recorded, else Σ RSS
  std::string yaml;
  bool sum = false;
  std::string align = "wall";
  std::string table;
  bool request = false;  // --request: the request to paste alone
  std::string margin;    // --margin PCT
};

// --margin, or the default (VPA's 15 %).
Result<double> margin_of(const ReportCli& o) {
  if (o.margin.empty()) return kDefaultMargin;
  const auto margin = parse_margin(o.margin);
  if (!margin) return Failure{"--margin: '" + terminal_text(o.margin) + "' is not a percentage (15%, 0 to 1000)"};
  return *margin;
}

// --request: the four forms for the trace's footprint (text), or the same figures as one JSON
// object, keyed as the report's JSON keys them; or why there are none.
Result<int> print_request(const Trace& trace, double margin, const ReportCli& o) {
  const auto request = report::trace_request(trace, margin);
  if (!request)
    return Failure{"--request: the trace has no footprint (recorded with --no-pss, or by mprof): nothing to size from"};
  if (o.format == "json") {
    std::cout << report::render(report::request_document(*request), report::Format::json, {unit_of(o.unit)});
    return 0;
  }
  std::cout << request_block(*request, output_columns(STDOUT_FILENO));
  return 0;
}

// --request writes text or JSON to stdout: another format, or the YAML there too, is a usage
// error, not one of the two dropped unasked.
Result<void> check_request_format(const ReportCli& o) {
  if (!o.request) return {};
  if (o.yaml == "-") return Failure{"--request and --yaml - both write to stdout; give --yaml a file"};
  if (o.format == "text" || o.format == "json") return {};
  return Failure{"--request writes text or json; --format " + o.format + " does not combine with it"};
}

// --table: the table CSV writes; a usage error naming the document's tables when it has no such one.
Result<void> choose_table(report::Document& doc, const ReportCli& o) {
  if (o.table.empty() || report::choose_csv_table(doc, o.table)) return {};
  std::string names;
  for (const std::string& n : report::table_names(doc)) names += (names.empty() ? "" : ", ") + n;
  return Failure{"--table " + o.table + ": this report has no such table (it has: " + names + ")"};
}

// The document of --table as --format asks.
Result<int> print(report::Document& doc, const ReportCli& o) {
  if (auto chosen = choose_table(doc, o); !chosen) return chosen.failure();
  report::RenderOptions options{unit_of(o.unit)};
  // Text fits the terminal (80 columns into a pipe): long facts and notes wrap, wide tables
  // leave columns out and name them.
  options.text_width = output_columns(STDOUT_FILENO);
  options.wider = "--format csv, json and md show them";
  std::cout << report::render(doc, format_of(o.format), options);
  return 0;
}

// A report reads a trace file reduced, in memory flat in its length: its peaks from the records
// kept, its trends and rates from further passes over the file (trace::read_trace_reduced); a
// pipe, or a trace whose clock went back, whole.
Trace read_for_report(const std::string& path) {
  if (auto reduced = trace::read_trace_reduced(path, analysis::kTimeSlack)) return std::move(*reduced);
  return trace::read_trace(path);
}

// A job's sum streams from its ranks' files when every one was read reduced; else all are read
// whole (the sum then merges them in memory).
Result<void> read_whole_unless_reduced(std::vector<Trace>& traces) {
  if (std::all_of(traces.begin(), traces.end(), [](const Trace& t) { return t.reduced.has_value(); })) return {};
  for (Trace& t : traces) {
    if (!t.reduced) continue;
    try {
      t = trace::read_trace(t.source);
    } catch (const std::exception& e) {
      return Failure{terminal_text(read_failure(e, t.source))};
    }
  }
  return {};
}

// A trace cut short, or of runs appended, still reads: the report says so, once, on stderr.
void say_if_incomplete(const Trace& trace) {
  for (const std::string& n : trace::reading_notices(trace)) stderr_speaker("report").line(n);
}

// --sum: the traces of a job's ranks as one report.
Result<int> report_job(const ReportCli& o) {
  if (o.request || !o.margin.empty()) {
    return Failure{std::string(o.request ? "--request" : "--margin") +
                   " sizes one run from its footprint; it does not combine with --sum (size each rank: "
                   "qprof report --request RANK.dat)"};
  }
  if (!o.yaml.empty() || o.format == "yaml") {
    return Failure{std::string(o.yaml.empty() ? "--format yaml" : "--yaml") +
                   " describes one run; it does not combine with --sum"};
  }
  if (o.traces.empty()) return Failure{"--sum: give the traces of a job's ranks"};
  const std::optional<Metric> asked = asked_metric(o.metric);
  if (asked && !has_series_over_time(*asked)) {
    return Failure{"--sum needs a metric sampled over time (rss, pss, uss, gpu, cgroup)"};
  }
  // Each rank read reduced (its row's figures), the sum from the files as they stream: flat in
  // memory. A rank that cannot be read twice (a pipe) has every rank read whole.
  std::vector<Trace> traces;
  traces.reserve(o.traces.size());
  for (const std::string& f : o.traces) {
    try {
      traces.push_back(read_for_report(f));
      say_if_incomplete(traces.back());
    } catch (const std::exception& e) {
      return Failure{terminal_text(read_failure(e, f))};
    }
    if (asked && !has_metric(traces.back(), *asked)) {
      return Failure{"--metric: " + report::missing_metric(traces.back(), *asked)};
    }
  }
  if (auto whole = read_whole_unless_reduced(traces); !whole) return whole.failure();
  std::vector<const Trace*> job;
  for (const Trace& t : traces) job.push_back(&t);
  if (const auto twice = analysis::repeated_rank(job)) return Failure{*twice};
  const MetricChoice chosen = metric_for(o.metric, job);
  const Align align = o.align == "start" ? Align::start : Align::wall;
  report::Document doc = report::job_report(job, chosen.metric, align);
  report::say_metric_fallback(doc, chosen.fallback);
  return print(doc, o);
}

// One trace: its report, or its YAML (--yaml -) on stdout.
Result<int> report_trace(const ReportCli& o) {
  if (o.traces.size() != 1) return Failure{"one trace at a time (--sum reports several traces as one job)"};
  if (auto checked = check_request_format(o); !checked) return checked.failure();
  const auto margin = margin_of(o);  // before any file is written: a usage error writes nothing
  if (!margin) return margin.failure();
  if (!o.yaml.empty()) {
    if (Result<void> checked = refuse_output_over(o.yaml, o.traces); !checked) {
      return Failure{"--yaml: " + terminal_text(checked.failure().message)};
    }
  }
  Trace trace;
  try {
    trace = read_for_report(o.traces.front());
    say_if_incomplete(trace);
  } catch (const std::exception& e) {
    return Failure{terminal_text(read_failure(e, o.traces.front()))};
  }
  const MetricChoice chosen = metric_for(o.metric, trace);
  const Metric metric = chosen.metric;
  if (!has_metric(trace, metric)) return Failure{"--metric: " + report::missing_metric(trace, metric)};
  if (!metric_info(metric).windowed) {
    return Failure{"--metric " + o.metric +
                   ": it has no samples over time, so no peak inside a stage (use one of: rss, pss, uss, gpu, cgroup)"};
  }
  // --format yaml is --yaml -: the report's YAML form is the Quark layout, one YAML for both.
  if (o.format == "yaml" && (o.yaml.empty() || o.yaml == "-")) {
    if (!o.table.empty()) return Failure{"--table chooses a table of --format csv; --format yaml writes them all"};
    std::cout << report::quark_yaml(trace);
    return 0;
  }
  if (!o.yaml.empty()) {
    try {
      const std::string yaml = report::quark_yaml(trace);
      if (o.yaml == "-") {
        std::cout << yaml;
        return 0;
      }
      if (Result<void> written = write_output(o.yaml, yaml); !written) {
        return Failure{"--yaml: " + terminal_text(written.failure().message)};
      }
    } catch (const std::exception& e) {
      return Failure{"--yaml: " + terminal_text(e.what())};
    }
    if (o.format == "yaml") {  // the file and stdout: the same YAML
      std::cout << report::quark_yaml(trace);
      return 0;
    }
  }
  if (o.request) return print_request(trace, *margin, o);
  report::Document doc = report::trace_report(trace, asked_metric(o.metric));  // says a fallback itself
  report::add_oom_and_request_facts(doc, trace, *margin);
  return print(doc, o);
}

}  // namespace

Command add_report(CLI::App& app, const Invocation& invocation) {
  auto opts = std::make_shared<ReportCli>();
  CLI::App* report =
      app.add_subcommand("report", "Print a trace's peaks and stage table, or write its Quark-layout YAML");
  report->footer(
      "Usage: qprof report [OPTIONS] [TRACE]\n"
      "       qprof report --sum [OPTIONS] TRACE...   a job's ranks as one (torchrun, mpirun, srun)\n"
      "text and md: the run's facts, its peaks, its stages; csv: one table (--table, default the\n"
      "stages; facts: the run's figures as one row); json: all of it.\n"
      "--yaml - (or --format yaml) writes the YAML to stdout instead of the tables. Exit status 2 for\n"
      "usage errors and unreadable traces.");
  report->add_option("trace", opts->traces,
                     "Trace file (.dat of qprof or mprof; default: the newest qprof_*.dat or mprofile_*.dat here, as "
                     "peak and plot take it); with --sum, the traces of a job's ranks");
  CLI::Option* sum =
      report->add_flag("--sum", opts->sum,
                       "The traces are one job's ranks (torchrun, mpirun, srun): the job's peak, each rank, each host, "
                       "stages across ranks");
  report->add_option("--align", opts->align, "With --sum: wall (default) or start (each trace from its own start)")
      ->check(CLI::IsMember({"wall", "start"}))
      ->needs(sum);  // without it nothing is laid on one axis: refused, not ignored
  report
      ->add_option("--format", opts->format,
                   "text (default), md, csv, json or yaml (the YAML of --yaml, in Quark's layout, on stdout)")
      ->check(CLI::Validator(
          [](std::string& s) -> std::string {
            return s == "yaml" || report::parse_format(s)
                       ? ""
                       : "unknown format '" + s + "' (formats: text, md, csv, json, yaml)";
          },
          "FORMAT"));
  report
      ->add_option("--unit", opts->unit,
                   "Unit of sizes: B, KiB, MiB, GiB, KB, MB, GB (default: MiB or GiB for text, bytes for csv/json)")
      ->check(unit_check());
  report
      ->add_option("--metric", opts->metric,
                   "Metric of the stage table (default: the footprint, shared pages once, where recorded, else "
                   "Σ RSS; rss: Σ RSS as mprof counts it)")
      ->check(metric_check());
  report->add_option(
      "--table", opts->table,
      "With --format csv: the table to write: stages (default), facts (the run's CPU, I/O, cgroup, "
      "limit, … as one row), peaks, or another table of the report (watched_dirs; ranks, hosts with --sum)");
  report->add_flag("--request", opts->request,
                   "Print only the memory request to paste (Slurm --mem=, Kubernetes resources, Docker --memory=, "
                   "systemd MemoryMax=): the footprint's peak plus --margin, grown after an OOM kill as Kubernetes' "
                   "VPA grows it; text, or one JSON object with --format json");
  report->add_option("--margin", opts->margin, "The request's margin over the footprint's peak (default 15%, VPA's)")
      ->type_name("PCT");
  report->add_option("--yaml", opts->yaml,
                     "Write the YAML report in the layout of Quark's quark_profile.yaml ('-': stdout)");

  return {report, [opts, &invocation]() -> Result<int> {
            if (invocation.had_dashdash) return Failure{"'--' takes no command here"};
            if (opts->sum) return report_job(*opts);
            if (opts->traces.empty()) {  // as peak and plot: the newest trace here (its path is the first fact)
              const auto newest = newest_trace();
              if (!newest) return Failure{"no trace given, and no qprof_*.dat or mprofile_*.dat here"};
              opts->traces.push_back(*newest);
            }
            return report_trace(*opts);
          }};
}

}  // namespace qprof::cli
