// SPDX-License-Identifier: Apache-2.0
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "qprof/common/output_file.hpp"
#include "qprof/common/request.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/common/text_wrap.hpp"
#include "qprof/common/units.hpp"
#include "commands.hpp"
#include "help_examples.hpp"
#include "profiled.hpp"
#include "qprof/analysis/dirs.hpp"
#include "recording.hpp"
#include "qprof/trace/format.hpp"
#include "qprof/report/quark_yaml.hpp"
#include "qprof/report/trend.hpp"
#include "qprof/record/session.hpp"
#include "qprof/runs/profiled_run.hpp"
#include "qprof/runs/run_summary.hpp"
#include "stderr_speaker.hpp"

namespace qprof::cli {
using analysis::budget_bytes;
using analysis::check_budget;
using analysis::has_metric;
using analysis::Metric;
using analysis::metric_info;
using analysis::metric_names;
using analysis::MetricChoice;
using record::peaks_in_memory;
using record::run_profiled;
using record::RunHooks;
using record::RunOptions;
using record::RunReport;
using trace::Marker;
using trace::Trace;

namespace {

struct RunCli {
  RunOptions run;
  std::string yaml;  // --yaml FILE
  bool yaml_stream = false;
  std::string max_peak;
  std::string mem;                  // --mem SIZE
  std::string margin;               // --margin PCT
  std::string metric;               // empty: the footprint where recorded, else Σ RSS (analysis::choose_metric)
  std::optional<pid_t> attach_pid;  // qprof attach PID, qprof run --attach PID
  bool no_live = false;
};

// Prefixes every line, so that qprof's lines stand out among the command's own on stderr.
std::string prefixed(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line))
    out += line.empty() ? prefix.substr(0, prefix.size() - 1) + "\n" : prefix + line + "\n";
  return out;
}

// True when -o names stdout, a pipe or a FIFO: a stream, never read back.
bool is_stream_output(const std::string& output) {
  if (output == "-") return true;
  struct stat st {};
  return ::stat(output.c_str(), &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode));
}

// The budget, on what qprof held in memory when the trace cannot be read back (or on the trace
// read back, which then holds the same samples). Returns the status it adds (0 or 3), or 2.
int check_run_budget(const RunCli& o, const Trace& trace, const std::function<int(const std::string&)>& fail,
                     const Speaker& say) {
  const MetricChoice chosen = metric_for(o.metric, trace);
  if (!has_metric(trace, chosen.metric)) return fail("--max-peak: " + report::missing_metric(trace, chosen.metric));
  const auto budget = budget_bytes(o.max_peak, trace);
  if (!budget) return fail(budget.failure().message);
  const auto check = check_budget(trace, chosen.metric, *budget);
  // Said where the default fell back to Σ RSS: the budget then holds mprof's figure.
  const std::string basis = chosen.fallback.empty() ? "" : " (" + chosen.fallback + ")";
  if (check->exceeded()) {
    say.line("memory budget exceeded: " + report::budget_message(trace, *check) + basis);
    return kBudgetExceeded;
  }
  if (!o.run.quiet) say.line(report::budget_message(trace, *check) + basis);
  return 0;
}

// After the run: the stage table, the YAML report and the budget, from the trace read back when
// it is a complete file, else from what qprof holds in memory (the budget only).
int after_run(const RunCli& o, const RunReport& report, int status, const Speaker& say) {
  const bool cmd_failed = status != 0;
  const auto fail = [&](const std::string& why) {
    say.line(why);
    return cmd_failed ? status : kUsageError;
  };
  // The status that says the trace is incomplete, when nothing worse happened.
  const auto incomplete = [&](int result) {
    if (report.trace_error.empty() || result != 0) return result;
    say.line("the trace " + report.trace_path + " is incomplete (" + report.trace_error + "); exit status " +
             std::to_string(kTraceIncomplete));
    return kTraceIncomplete;
  };
  if (!report.trace_readable_back || !report.trace_error.empty()) {
    int result = status;
    if (!o.run.quiet && !report.stages.empty()) {
      say.line(std::string("no stage table: ") + (report.trace_error.empty()
                                                      ? "qprof does not read back a trace it streamed"
                                                      : "the trace is incomplete"));
    }
    // Status 4 says the trace is incomplete, and so that there is no report of it.
    if (!o.yaml.empty()) say.line("--yaml: not written: the trace is incomplete");
    if (!o.max_peak.empty()) {
      const int budget = check_run_budget(o, peaks_in_memory(report), fail, say);
      if (result == 0) result = budget;
    }
    return incomplete(result);
  }
  if (o.run.quiet && o.yaml.empty() && o.max_peak.empty()) return status;  // nothing to add
  const Result<Trace> read = record::read_back(report);
  if (!read) {
    if (o.yaml.empty() && o.max_peak.empty()) return status;  // nothing more was asked
    return fail("cannot read the trace back: " + terminal_text(read.failure().message));
  }
  const Trace& trace = *read;
  const MetricChoice chosen = metric_for(o.metric, trace);
  const bool has = has_metric(trace, chosen.metric);

  // The summary's trend: fitted on the trace read back, since the recorder keeps no series.
  // The summary's width: the terminal's (80 into a pipe or a log).
  const std::size_t columns = output_columns(STDERR_FILENO);
  if (!o.run.quiet) {
    if (const auto growth = report::growth_summary(trace))
      say.text(runs::summary_line("trend", terminal_text(*growth), columns));
  }

  if (!o.run.quiet && !trace.stages.empty()) {
    const Metric table_metric = has && metric_info(chosen.metric).windowed ? chosen.metric : Metric::rss;
    report::Document doc;
    doc.tables.push_back(report::stage_table(trace, table_metric));
    report::add_stage_trends(doc.tables.back(), trace, table_metric);
    if (!chosen.fallback.empty()) doc.tables.back().notes.push_back(chosen.fallback);
    // The summary's columns: the stage name, duration, share, peak and delta stay.
    report::RenderOptions narrow;
    narrow.named_width = std::max<std::size_t>(columns, 40);
    narrow.text_width = narrow.named_width - std::string_view("qprof: ").size();
    narrow.wider = "qprof report shows them";
    say.text(prefixed(report::render(doc, report::Format::text, narrow), "qprof: "));
  }
  int result = status;
  if (!o.yaml.empty()) {
    try {
      if (Result<void> written = write_output(o.yaml, report::quark_yaml(trace)); !written) {
        result = fail(std::string("--yaml: ") + terminal_text(written.failure().message));
      }
    } catch (const std::exception& e) {
      result = fail(std::string("--yaml: ") + terminal_text(e.what()));
    }
  }
  if (!o.max_peak.empty()) {
    const int budget = check_run_budget(o, trace, fail, say);
    if (result == 0) result = budget;
  }
  return result;
}

// --margin PCT, and --mem SIZE: a size, in a cgroup of the tree's own (so not with --cgroup off).
Result<void> sizing_options(RunCli& o) {
  if (!o.margin.empty()) {
    const auto margin = parse_margin(o.margin);
    if (!margin) return Failure{"--margin: '" + terminal_text(o.margin) + "' is not a percentage (15%, 0 to 1000)"};
    o.run.margin = *margin;
  }
  const std::string& mem = o.mem;
  RunOptions& run = o.run;
  if (mem.empty()) return {};
  const auto bytes = parse_size(mem);
  if (!bytes || *bytes < (Bytes{1} << 20)) {
    return Failure{"--mem: '" + terminal_text(mem) + "' is not a size of at least 1 MiB: " + size_forms()};
  }
  if (run.cgroup == record::CgroupMode::off) {
    return Failure{"--mem runs the tree in a cgroup of its own: it does not go with --cgroup off"};
  }
  run.memory_limit = *bytes;
  return {};
}

}  // namespace

// A PID as pgrep prints it: CLI11's own refusal is "Could not convert: PID = abc".
CLI::Validator pid_check() {
  return CLI::Validator(
      [](std::string& s) -> std::string {
        pid_t pid = 0;
        const auto r = std::from_chars(s.data(), s.data() + s.size(), pid);
        if (!s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size() && pid > 0) return "";
        return "'" + s + "' is not a process ID: a whole number above 0, as ps and pgrep print it";
      },
      "PID");
}

// mprof run --backend psutil_pss (or psutil_uss): what qprof records without being asked.
constexpr const char* kNoBackend =
    "--backend: qprof has none to choose: it reads RSS and PSS (the footprint, as psutil_pss) of every "
    "process anyway; the summary gives both, and --metric pss makes PSS the metric of --max-peak";

// run's options that only a command qprof started has (attach leaves them out).
constexpr const char* kNotForAttach[] = {"--kill-after", "--cgroup", "--marker-regex", "--mem"};

namespace {

// The shared sampling options speak of a command qprof started: attach's say what it does.
void adapt_to_attach(CLI::App& attach, RunCli& opts) {
  if (CLI::Option* t = attach.get_option_no_throw("--timeout")) {
    t->description("Stop recording after this many seconds (the process is never signalled)");
  }
  // The exit is learnt through a pidfd, as the descendants' end is through /proc: neither needs
  // a signal or the process's stderr.
  if (CLI::Option* w = attach.get_option_no_throw("--no-wait-daemons")) {
    w->description("Stop when PID exits, even if descendants it started keep running (none is signalled)");
  }
  // What only a command qprof started has: signals after --timeout, its own cgroup, its stderr.
  // Hidden, not removed: parsed, so that they are refused with why (check_recording_request),
  // not taken for the PID ("'on' is not a process ID"). --cgroup off or auto is what attach does
  // anyway (the process keeps its cgroup): accepted; on is refused (attach_to).
  for (const char* name : kNotForAttach) {
    if (CLI::Option* o = attach.get_option_no_throw(name)) o->group("");
  }
  attach.add_option("--mem", opts.mem)->group("");
}

// run's or attach's options, into `opts`.
CLI::App* add_recording_options(CLI::App& app, RunCli& opts, bool attach) {
  CLI::App* run = nullptr;
  if (attach) {
    run = app.add_subcommand("attach", "Record the memory of a running process and its descendants until it exits");
    run->footer(kAttachFooter);
    run->add_option("PID", opts.attach_pid, "The process to follow (never signalled by qprof)")
        ->required()
        ->check(pid_check());
  } else {
    run = app.add_subcommand("run", "Run a command and record the memory of its whole process tree");
    run->footer(
        "Usage: qprof run [OPTIONS] [--] CMD [ARGS...]\n"
        "qprof exits with CMD's status (128+N if a signal killed it; 127: not found; 126: not executable);\n"
        "when CMD succeeded but its peak exceeded --max-peak: 3; when CMD succeeded but a write of the\n"
        "trace failed (the trace is incomplete): 4. Usage errors (a device as -o included): 2.");
    run->prefix_command();  // everything from CMD on belongs to CMD, options included
    run->allow_extras();
    run->add_option("--mem", opts.mem,
                    "Run the tree in a memory cgroup of its own limited to SIZE (4GiB, 600M) with no swap, as Slurm's "
                    "--mem or a container's limit would (root, or a delegated cgroup v2 subtree; else exit 2)")
        ->type_name("SIZE");
    run->add_option("--attach", opts.attach_pid,
                    "Follow the running process PID instead of a command (as qprof attach PID)")
        ->check(pid_check());
  }
  run->add_flag("--no-live", opts.no_live, "No live status line on a terminal");
  run->add_option(
      "-o,--output", opts.run.output,
      std::string("Trace file (default: qprof_YYYYMMDDhhmmss.mmm_PID.dat, created exclusively, with host and rank "
                  "under a launcher; - for stdout") +
          (attach ? "" : ", then CMD's stdout goes to stderr") +
          "); placeholders %h host, %r rank, %l local rank, %w world size, %p qprof's PID, %t start time, %j job id, "
          "%%");
  add_sampling_options(*run, opts.run);
  run->add_flag("-M,--multiprocess", opts.run.multiprocess,
                "Also record each process of the tree (CHLD lines, as mprof -M)");
  run->add_flag("-q,--quiet", opts.run.quiet, "No summary, no stage table and no live line");
  CLI::Option* yaml =
      run->add_option("--yaml", opts.yaml, "Also write a YAML report in the layout of Quark's quark_profile.yaml");
  run->add_flag("--yaml-stream", opts.yaml_stream, "Rewrite the --yaml file at every checkpoint while the command runs")
      ->needs(yaml);
  run->add_option("--max-peak", opts.max_peak,
                  "Memory budget: exit with status 3 when the peak exceeds SIZE (4GiB, 512MB; a bare number is MiB) or "
                  "PCT of the "
                  "memory limit in force (90%) and CMD succeeded")
      ->check(budget_check());
  run->add_option("--margin", opts.margin,
                  "The summary's memory request: the footprint's peak plus PCT (default 15%, the margin of "
                  "Kubernetes' Vertical Pod Autoscaler)")
      ->type_name("PCT");
  run->add_option("--metric", opts.metric,
                  "The metric of the stage table and of --max-peak (default: the footprint, shared pages once, where "
                  "recorded, else Σ RSS; rss: Σ RSS as mprof counts it; pss, uss, all: also record PSS and USS even "
                  "with --no-pss), any of " +
                      metric_names())
      ->check(run_metric_check());
  if (attach) adapt_to_attach(*run, opts);
  // mprof's own spellings, accepted so that scripts can switch: qprof always follows children
  // and always passes the exit code on.
  run->add_flag("-C,--include-children")
      ->description("Accepted for mprof compatibility (qprof always includes children)");
  if (!attach)
    run->add_flag("-E,--exit-code")
        ->description("Accepted for mprof compatibility (qprof always returns CMD's status)");

  return run;
}

// The request as the run will take it, or the usage error that stops it before the command starts.
Result<void> check_recording_request(RunCli& o, CLI::App& self, const Invocation& invocation) {
  o.run.command = invocation.command(self);
  o.run.live = !o.no_live;
  if (o.attach_pid) {
    // run --attach takes run's options: those that only a started command has are errors.
    for (const char* name : kNotForAttach) {
      const CLI::Option* given = self.get_option_no_throw(name);
      if (given == nullptr || given->count() == 0 || std::string_view(name) == "--cgroup") continue;
      if (std::string_view(name) == "--mem") {
        return Failure{
            "--mem runs the tree in a memory cgroup of its own: not done to a running process (it would "
            "change the limits it runs under)"};
      }
      const bool signals = std::string_view(name) == "--kill-after";
      return Failure{std::string(name) + " does not go with attach: " +
                     (signals ? "it is the grace before SIGKILL, and an attached process is never signalled"
                              : "it reads the command's stderr, and an attached process's stderr is not qprof's")};
    }
    if (auto attached = attach_to(o.run, *o.attach_pid); !attached) return attached.failure();
  } else if (o.run.command.empty()) {
    return Failure{"no command given\nUsage: qprof run [OPTIONS] [--] CMD [ARGS...]"};
  }
  // prefix_command() stops at the first word it does not know, an unknown option too.
  const std::vector<std::string> before_dashdash = self.remaining();
  if (!before_dashdash.empty() && before_dashdash.front().size() > 1 && before_dashdash.front()[0] == '-') {
    if (before_dashdash.front().starts_with("--backend")) return Failure{kNoBackend};
    const std::string near = option_suggestion(self, before_dashdash.front());
    return Failure{"unknown option " + terminal_text(before_dashdash.front()) +
                   (near.empty() ? "" : "; did you mean " + near + "?") + " (see qprof " + self.get_name() +
                   " --help; a command starting with '-' goes after --)"};
  }
  if (auto checked = check_sampling_options(o.run); !checked) return checked.failure();
  if (auto sizing = sizing_options(o); !sizing) return sizing.failure();
  // A metric the options record no series of is known now, not after the run (with the budget
  // unchecked and the command's status lost to a usage error).
  if (o.metric == "gpu" && o.run.gpu == "none") {
    return Failure{"--metric gpu: --gpu none records no GPU memory (drop --gpu none, or choose another --metric)"};
  }
  if (o.metric == "cgroup" && o.run.cgroup == record::CgroupMode::off) {
    return Failure{
        "--metric cgroup: --cgroup off records no cgroup charge (drop --cgroup off, or choose another "
        "--metric)"};
  }
  record_metric(o.run, o.metric);
  if (auto resolved = resolve_job(o.run, self.get_name()); !resolved) return resolved.failure();
  if (!o.yaml.empty() && is_stream_output(o.run.output)) {
    return Failure{"--yaml reads the trace back: it needs -o to be a file, not " +
                   std::string(o.run.output == "-" ? "stdout" : "a pipe")};
  }
  // A bad --yaml must fail before the command runs, as a bad -o does.
  if (!o.yaml.empty()) {
    Result<void> checked = o.run.output.empty() ? Result<void>{} : refuse_output_over(o.yaml, {o.run.output});
    if (checked) checked = check_output(o.yaml);
    if (!checked) return Failure{"--yaml: " + terminal_text(checked.failure().message)};
  }
  return {};
}

// The run itself, its summary, and what was asked of it after (stage table, YAML, budget).
Result<int> record_and_report(RunCli& o) {
  std::unique_ptr<report::QuarkYamlStream> stream;
  RunHooks hooks;
  hooks.speaker = stderr_speaker();
  if (o.yaml_stream) {
    // The trace's name is known once it is created (the default one is unique).
    hooks.on_trace_opened = [&stream, &o](const std::string& trace) {
      stream = std::make_unique<report::QuarkYamlStream>(trace, o.yaml);
    };
    hooks.on_checkpoint = [&stream](const Marker&) { stream->checkpoint(); };
    hooks.on_trace_failed = [&stream] { stream->abandon(); };
  }
  RunReport report;
  const int status = run_profiled(o.run, &report, hooks);
  runs::say_summary(o.run, report, hooks.speaker);
  if (!report.refusal.empty()) return Failure{report.refusal};
  if (stream) {
    stream->finish();
    for (const std::string& e : stream->errors()) hooks.speaker.line("--yaml-stream: " + e);
  }
  if (!report.launched) return status;
  return after_run(o, report, status, hooks.speaker);
}

}  // namespace

Command add_recording(CLI::App& app, const Invocation& invocation, bool attach) {
  auto opts = std::make_shared<RunCli>();
  CLI::App* self = add_recording_options(app, *opts, attach);
  return {self, [opts, self, &invocation]() -> Result<int> {
            if (Result<void> checked = check_recording_request(*opts, *self, invocation); !checked) {
              return checked.failure();
            }
            return record_and_report(*opts);
          }};
}

}  // namespace qprof::cli

namespace qprof::cli {

Command add_run(CLI::App& app, const Invocation& invocation) { return add_recording(app, invocation, false); }

}  // namespace qprof::cli
