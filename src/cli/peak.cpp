// SPDX-License-Identifier: Apache-2.0
// qprof peak FILE…        one line per trace, "FILE<TAB>PEAK MiB" as mprof peak prints
// qprof peak -- CMD …     runs CMD like qprof run and prints nothing but its peak on stdout
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "profiled.hpp"
#include "qprof/analysis/catalog.hpp"
#include "qprof/analysis/dirs.hpp"
#include "qprof/analysis/timeline.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/common/temporary_trace.hpp"
#include "qprof/trace/format.hpp"
#include "qprof/trace/completeness.hpp"
#include "qprof/record/session.hpp"
#include "qprof/runs/profiled_run.hpp"
#include "stderr_speaker.hpp"
#include "qprof/report/job.hpp"

namespace qprof::cli {
using analysis::Align;
using analysis::budget_bytes;
using analysis::BudgetCheck;
using analysis::clock_skew_note;
using analysis::group_by_host;
using analysis::has_metric;
using analysis::has_series_over_time;
using analysis::HostGroup;
using analysis::job_peak;
using analysis::kTimeSlack;
using analysis::Metric;
using analysis::metric_info;
using analysis::metric_names;
using analysis::MetricChoice;
using analysis::stages_named;
using record::peaks_in_memory;
using record::RunOptions;
using record::RunReport;
using trace::Stage;
using trace::Trace;

namespace {

struct PeakCli {
  RunOptions run;
  std::vector<std::string> files;
  std::string unit = "MiB";
  bool json = false;
  std::string metric;  // empty: Σ RSS for mprof's one-liner, else the footprint where recorded (peak_metric)
  std::string stage;
  bool children = false;     // --children: asked for
  bool no_children = false;  // --no-children: mprof's child lines left out
  std::string max_peak;
  bool sum = false;      // the job: the traces summed on one time axis
  bool by_host = false;  // the job's peak on each host
  std::string align = "wall";
};

// Σ RSS without --metric: mprof's one-liner (a file, no budget, no sum) and --children's lines.
bool rss_by_default(const PeakCli& o, bool run_mode) {
  const bool mprof_one_liner = !run_mode && o.max_peak.empty() && !o.sum && !o.by_host;
  return o.metric.empty() && (mprof_one_liner || o.children);
}

// A trace as `peak` needs it: streamed, its samples reduced to their maxima as they are read (a
// trace of any length, or a FIFO that never ends, in flat memory). With --stage a regular file is
// read twice: for Σ RSS the stage's times first, then the highest samples inside them; for any
// other metric as report reads it (read_trace_reduced). --sum and
// --by-host add the series up on one time axis as the files stream: those traces are read
// reduced (a pipe whole, and then every rank: sum_ranks_whole).
Trace read_for_peak(const std::string& file, const PeakCli& o) {
  if (o.sum || o.by_host) {
    if (auto reduced = trace::read_trace_reduced(file, kTimeSlack)) return std::move(*reduced);
    return trace::read_trace(file);
  }
  if (o.stage.empty()) return trace::read_trace_peaks(file);
  struct stat st {};
  const bool regular = ::stat(file.c_str(), &st) == 0 && S_ISREG(st.st_mode);
  if (!regular) return trace::read_trace(file);  // read once: bounded at 1 GiB
  // Σ RSS in a stage (peak_metric's choice for it), with each process's as mprof prints them: the
  // peaks reader over the stage's windows, which keeps the children's records there.
  if (o.metric == "rss" || rss_by_default(o, false)) {
    Trace t = trace::read_trace_peaks(file, {}, o.stage);
    std::vector<std::pair<Seconds, Seconds>> windows;
    for (const Stage* s : stages_named(t, o.stage)) {
      windows.emplace_back(s->t_start - kTimeSlack, s->t_end + kTimeSlack);
    }
    if (windows.empty()) return t;  // peak_line says which stages there are
    return trace::read_trace_peaks(file, windows, o.stage);
  }
  // Any other metric as report reads a stage (its own records and the one at its start, which the
  // charge's high-water mark inside it is held against), so that the two give one figure.
  if (auto reduced = trace::read_trace_reduced(file, kTimeSlack)) return std::move(*reduced);
  return trace::read_trace(file);
}

// `qprof peak FILE` alone is mprof's one-liner and prints Σ RSS as mprof does (so do --children's
// per-process lines). Where the figure is held against a limit (--max-peak; --sum and --by-host,
// what Slurm's --mem holds) and for -- CMD, the default is the footprint where recorded.
MetricChoice peak_metric(const PeakCli& o, const std::vector<const Trace*>& traces, bool run_mode) {
  if (rss_by_default(o, run_mode)) return {Metric::rss, {}};
  return metric_for(o.metric, traces);
}

// The child lines: asked for, or (as mprof peak prints them) whenever a trace of files has them
// and the peak is RSS, the children's metric. Never with -- CMD, whose stdout is the peak alone.
report::PeakLine peak_of(const Trace& t, const PeakCli& o, bool run_mode = false) {
  const MetricChoice chosen = peak_metric(o, {&t}, run_mode);
  const bool mprof_default =
      !run_mode && !o.no_children && !o.json && !t.children.empty() && chosen.metric == Metric::rss;
  report::PeakLine line = report::peak_line(t, chosen.metric, o.stage, o.children || mprof_default);
  line.metric_fallback = chosen.fallback;
  return line;
}

// peak's words beside its figures: "qprof peak: …" on stderr.
void say(const std::string& message) { stderr_speaker("peak").line(message); }

// stdout keeps its form (the bare figure with -- CMD): where the default fell back to Σ RSS, that
// is said on stderr, once per trace.
void say_fallbacks(const std::vector<report::PeakLine>& lines, bool run_mode) {
  for (const report::PeakLine& l : lines) {
    if (!l.peak || l.metric_fallback.empty()) continue;
    say((run_mode || l.file.empty() ? "" : terminal_text(l.file) + ": ") + l.metric_fallback);
  }
}

// Prints the lines and checks the budget; the status of this part (0, 2 for an error, 3).
int print_peaks(const std::vector<report::PeakLine>& lines, const std::vector<const Trace*>& traces, const PeakCli& o,
                bool run_mode) {
  const Unit unit = *unit_of(o.unit);
  bool error = false, over = false;
  for (const auto& l : lines) {
    if (l.peak) continue;
    say(terminal_text(l.error));  // it quotes stage names
    error = true;
  }
  std::cout << (o.json ? report::peak_json(lines, unit, run_mode) : report::peak_lines(lines, unit, !run_mode));
  std::cout.flush();
  say_fallbacks(lines, run_mode);
  // stdout keeps mprof's form; an OOM kill, and that a figure misses processes, are said beside it.
  for (const auto& l : lines) {
    for (const std::string& k : l.oom_kills) {
      say("OOM kill" + (run_mode ? "" : " in " + terminal_text(l.file)) + ": " + terminal_text(k));
    }
  }
  for (std::size_t i = 0; i < lines.size() && !run_mode; ++i) {
    if (lines[i].peak && traces[i]->unread_processes > 0) {
      say("warning: " + terminal_text(lines[i].file) + " is INCOMPLETE: its figures miss " +
          std::to_string(traces[i]->unread_processes) + " process(es) qprof could not read (out of file descriptors)");
    }
  }
  if (!o.max_peak.empty()) {
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (!lines[i].peak) continue;
      const auto limit = budget_bytes(o.max_peak, *traces[i]);  // 90%: of this trace's limit
      if (!limit) {
        say(terminal_text(limit.failure().message));
        error = true;
        continue;
      }
      const BudgetCheck check{lines[i].metric, *limit, *lines[i].peak, lines[i].where};
      if (!check.exceeded()) continue;
      over = true;
      const std::string& fallback = lines[i].metric_fallback;
      say("memory budget exceeded" + (run_mode ? "" : " in " + lines[i].file) + ": " +
          report::budget_message(*traces[i], check) + (fallback.empty() ? "" : " (" + fallback + ")"));
    }
  }
  return error ? kUsageError : over ? kBudgetExceeded : 0;
}

// A job's sum streams from its ranks' files when every one was read reduced; else all are read
// whole (the sum then merges them in memory).
Result<void> sum_ranks_whole(const std::vector<std::unique_ptr<Trace>>& traces) {
  if (std::all_of(traces.begin(), traces.end(), [](const auto& t) { return t->reduced.has_value(); })) return {};
  for (const auto& t : traces) {
    if (!t->reduced) continue;
    try {
      *t = trace::read_trace(t->source);
    } catch (const std::exception& e) {
      return Failure{terminal_text(read_failure(e, t->source))};
    }
  }
  return {};
}

// --sum / --by-host: the traces as one job. Every trace must be readable and have the metric.
Result<int> print_job_peak(const std::vector<const Trace*>& traces, const PeakCli& o) {
  const MetricChoice chosen = peak_metric(o, traces, false);
  const Metric metric = chosen.metric;
  if (!has_series_over_time(metric)) {
    return Failure{"--sum needs a metric sampled over time; " + o.metric +
                   " is a figure known only at the end of each run"};
  }
  for (const Trace* t : traces) {
    if (!has_metric(*t, metric)) return Failure{report::missing_metric(*t, metric)};
  }
  if (const auto twice = analysis::repeated_rank(traces)) return Failure{*twice};
  if (!chosen.fallback.empty()) say(terminal_text(chosen.fallback));
  if (const auto jobs = analysis::several_jobs_note(traces)) say("warning: " + *jobs);
  if (const auto ranks = analysis::world_size_note(traces)) say("note: " + *ranks);
  if (const auto kinds = analysis::mixed_footprint_note(traces); kinds && metric == Metric::footprint) {
    say("note: " + *kinds);
  }
  const Align align = o.align == "start" ? Align::start : Align::wall;
  const Unit unit = *unit_of(o.unit);
  std::cout << (o.json ? report::job_peak_json(traces, metric, align, o.by_host, unit)
                       : report::job_peak_lines(traces, metric, align, o.by_host, unit));
  std::cout.flush();
  for (const std::string& kill : report::rank_oom_kills(traces)) say("OOM kill in " + kill);
  if (const auto skew = clock_skew_note(traces)) say("warning: " + *skew);
  if (o.max_peak.empty()) return 0;
  if (!parse_size(o.max_peak)) {
    return Failure{"--max-peak " + o.max_peak + ": a percentage of the limit is per trace; the job's sum takes a size"};
  }
  const Bytes limit = *parse_size(o.max_peak);
  int status = 0;
  std::vector<HostGroup> groups;
  if (o.by_host) {
    groups = group_by_host(traces);
  } else {
    groups.push_back({"the job", {}});
    for (std::size_t i = 0; i < traces.size(); ++i) groups.back().traces.push_back(i);
  }
  for (const HostGroup& g : groups) {
    std::vector<const Trace*> part;
    for (std::size_t i : g.traces) part.push_back(traces[i]);
    const auto peak = job_peak(part, analysis::job_footprint_metric(traces, metric), align);
    if (!peak || peak->bytes <= limit) continue;
    say("memory budget exceeded: " + std::string(o.by_host ? "host " : "") + terminal_text(g.host) + " peaks at " +
        human_bytes(peak->bytes) + " (" + std::string(metric_info(metric).title) + ", ranks summed) " +
        (peak->kernel_rank ? "between samples of " + analysis::rank_label(*part[*peak->kernel_rank])
                           : "at " + human_seconds(peak->t)) +
        ", over the budget of " + human_bytes(limit) + " by " + human_bytes(peak->bytes - limit));
    status = kBudgetExceeded;
  }
  return status;
}

// A trace file that is removed when qprof is done, unless -o named it.
struct TraceFile {
  std::string path;
  bool temporary = false;
  ~TraceFile() {
    if (temporary) ::unlink(path.c_str());
  }
};

Result<int> peak_of_command(PeakCli& o, const std::vector<std::string>& command) {
  o.run.command = command;
  o.run.quiet = true;
  record_metric(o.run, o.metric);
  o.run.multiprocess = o.run.multiprocess || o.children;
  if (o.run.output == "-")
    return Failure{"-o - would mix the trace with the peak on stdout; use qprof run -o - instead"};
  TraceFile trace_file{o.run.output, false};
  if (trace_file.path.empty()) {
    Result<TemporaryTrace> created = create_temporary_trace("qprof-peak");
    if (!created) return created.failure();
    ::close(created->fd);
    trace_file = {created->path, true};
    o.run.output = created->path;
  }
  Result<runs::ProfiledRun> ran = runs::run_and_read({o.run, true, false, stderr_speaker()});
  if (!ran) return ran.failure().status;  // not started: the session said why
  const int status = ran->status;
  const RunReport& report = ran->report;
  Trace trace;
  const bool incomplete = ran->state == runs::TraceState::incomplete;
  if (incomplete || ran->state == runs::TraceState::not_a_file) {
    // Never read back: a broken trace may be cut anywhere, a stream is gone. The peaks qprof
    // held in memory answer, except what needs the samples themselves.
    if (!o.stage.empty() || o.children) {
      return Failure{
          "--stage and --children need the trace, which is " + std::string(incomplete ? "incomplete" : "not a file"),
          status != 0  ? status
          : incomplete ? kTraceIncomplete
                       : kUsageError};
    }
    trace = peaks_in_memory(report);
  } else if (ran->state == runs::TraceState::unreadable) {
    return Failure{"cannot read the trace back: " + terminal_text(ran->problem), status != 0 ? status : kUsageError};
  } else {
    trace = std::move(ran->trace);
  }
  report::PeakLine line = peak_of(trace, o, true);
  if (trace_file.temporary) line.file.clear();  // removed at once: naming it would mislead
  const int peak_status = print_peaks({line}, {&trace}, o, true);
  if (status != 0) return status;
  if (peak_status == 0 && incomplete) {
    say("the trace is incomplete (" + report.trace_error + "); the peak is what qprof sampled");
    return kTraceIncomplete;
  }
  return peak_status;
}

// FILE...: each trace's peak, or with --sum/--by-host the job's.
Result<int> peak_of_files(PeakCli& o) {
  if (o.files.empty()) {
    const auto newest = newest_trace();
    if (!newest) return Failure{"no trace given, and no qprof_*.dat or mprofile_*.dat here"};
    o.files.push_back(*newest);
  }
  std::vector<std::unique_ptr<Trace>> traces;
  std::vector<const Trace*> read;
  std::vector<report::PeakLine> lines;
  for (const std::string& f : o.files) {
    try {
      traces.push_back(std::make_unique<Trace>(read_for_peak(f, o)));
      for (const std::string& n : trace::reading_notices(*traces.back())) say(n);
    } catch (const std::exception& e) {
      report::PeakLine l;
      l.file = f;
      l.metric = asked_metric(o.metric).value_or(Metric::rss);
      l.error = read_failure(e, f);
      lines.push_back(std::move(l));
      read.push_back(nullptr);
      continue;
    }
    lines.push_back(peak_of(*traces.back(), o));
    read.push_back(traces.back().get());
    if (o.children && traces.back()->children.empty() && !o.sum && !o.by_host) {
      say(terminal_text(f) +
          ": no child lines: the trace has no processes of their own (record with qprof "
          "run -M)");
    }
  }
  if (o.sum || o.by_host) {
    for (const auto& l : lines) {
      if (!l.error.empty() && !l.peak && std::find(read.begin(), read.end(), nullptr) != read.end()) {
        say(l.error);
      }
    }
    if (std::find(read.begin(), read.end(), nullptr) != read.end()) return kUsageError;
    if (auto whole = sum_ranks_whole(traces); !whole) return whole.failure();
    return print_job_peak(read, o);
  }
  return print_peaks(lines, read, o, false);
}

}  // namespace

Command add_peak(CLI::App& app, const Invocation& invocation) {
  auto opts = std::make_shared<PeakCli>();
  CLI::App* peak = app.add_subcommand("peak", "Print the peak memory of traces, or of a command run under qprof");
  peak->footer(
      "Usage: qprof peak [OPTIONS] [FILE...]       one line per trace: FILE<TAB>PEAK MiB (mprof peak's form)\n"
      "       qprof peak [OPTIONS] -- CMD [ARGS...]  runs CMD like qprof run; stdout: the peak alone\n"
      "With -- CMD, CMD's own stdout goes to stderr so that $(qprof peak -- CMD) is the peak; the exit\n"
      "status is CMD's. Without FILE, the newest qprof_*.dat or mprofile_*.dat here. A trace recorded\n"
      "with -M also gets a line per process (\"  Child PID  PEAK MiB\") as mprof peak prints them.\n"
      "Exit status: 2 for usage errors, unreadable traces, or a metric or stage a trace lacks; 3 when a\n"
      "peak exceeds --max-peak (and CMD succeeded).");
  peak->add_option("files", opts->files, "Trace files (.dat of qprof or mprof)");
  peak->add_option("-o,--output", opts->run.output,
                   "With -- CMD: keep the trace in this file (default: a temporary file)");
  add_sampling_options(*peak, opts->run);
  peak->add_option("--unit", opts->unit, "Unit of the peak: B, KiB, MiB (default), GiB, KB, MB, GB")
      ->check(unit_check());
  peak->add_flag("--json", opts->json, "JSON instead of text (an object with -- CMD, an array for files)");
  peak->add_option("--metric", opts->metric,
                   "Which peak: " + metric_names() +
                       " (default: Σ RSS for FILE... alone, as mprof peak prints it; with --max-peak, --sum, "
                       "--by-host and -- CMD the footprint, shared pages once, where recorded, else Σ RSS)")
      ->check(metric_check());
  peak->add_option("--stage,--func", opts->stage,
                   "The peak inside this stage only (every run of it); --func: mprof's name");
  peak->add_flag("--children", opts->children,
                 "Also the peak of each process recorded with -M (CHLD lines); the default for traces that have them, "
                 "as mprof peak prints them (text; with --json, and with -- CMD, only when asked)");
  peak->add_flag("--no-children", opts->no_children, "Leave out the child lines of traces recorded with -M");
  peak->add_option("--max-peak", opts->max_peak,
                   "Memory budget: exit with status 3 when a peak exceeds SIZE (4GiB; a bare number is MiB), or PCT of "
                   "the trace's memory limit (90%)")
      ->check(budget_check());
  peak->add_flag("--sum", opts->sum,
                 "The traces are one job's ranks: the peak of their sum on one time axis (one line)");
  peak->add_flag("--by-host", opts->by_host, "Like --sum, one line per host (memory is a per-host limit)");
  CLI::Option* align =
      peak->add_option(
              "--align", opts->align,
              "With --sum/--by-host: wall (default: the traces' wall-clock times) or start (each from its own start)")
          ->check(CLI::IsMember({"wall", "start"}));

  return {peak, [opts, &invocation, align]() -> Result<int> {
            PeakCli& o = *opts;
            if (o.children && o.no_children) return Failure{"--children and --no-children: choose one"};
            // Without a sum nothing is laid on one time axis: refused, not ignored.
            if (align->count() > 0 && !o.sum && !o.by_host) return Failure{"--align goes with --sum or --by-host"};
            if (o.children && asked_metric(o.metric).value_or(Metric::rss) != Metric::rss) {
              return Failure{"--children gives each process's RSS; it does not combine with --metric " + o.metric};
            }
            if ((o.sum || o.by_host) && (o.children || !o.stage.empty())) {
              return Failure{"--sum and --by-host give the job's peak; they do not combine with " +
                             std::string(o.children ? "--children" : "--stage")};
            }
            if (invocation.had_dashdash) {
              if (o.sum || o.by_host)
                return Failure{"--sum and --by-host read the traces of a job's ranks, not -- CMD"};
              if (!o.files.empty()) return Failure{"give trace files or -- CMD, not both"};
              if (invocation.after_dashdash.empty()) return Failure{"no command after --"};
              if (auto checked = check_sampling_options(o.run); !checked) return checked.failure();
              if (auto resolved = resolve_job(o.run, "peak"); !resolved) return resolved.failure();
              return peak_of_command(o, invocation.after_dashdash);
            }
            return peak_of_files(o);
          }};
}

}  // namespace qprof::cli
