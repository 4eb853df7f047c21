// SPDX-License-Identifier: Apache-2.0
// qprof sweep -p NAME=V1,V2,... [-p ...] [--env NAME=TEMPLATE] [--repeat N] -- CMD {NAME} ...
// Runs the command once per point of the grid (and per repeat) under qprof, one trace per run
// named by its values, then prints the runs and, over one parameter, the model of each figure.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "profiled.hpp"
#include "qprof/analysis/sweep_grid.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/common/output_file.hpp"
#include "qprof/common/units.hpp"
#include "qprof/fit/fit.hpp"
#include "qprof/fit/probe_group.hpp"
#include "qprof/fit/report.hpp"
#include "qprof/fit/saved_result.hpp"
#include "qprof/record/session.hpp"
#include "qprof/trace/format.hpp"
#include "sweep_model_output.hpp"

namespace qprof::cli {
using analysis::fill_placeholders;
using analysis::find_peak;
using analysis::has_metric;
using analysis::Metric;
using analysis::parse_sweep_parameter;
using analysis::point_name;
using analysis::sweep_grid;
using analysis::SweepParameter;
using analysis::SweepPoint;
using analysis::trace_duration;
using record::read_back;
using record::run_profiled;
using record::RunOptions;
using record::RunReport;
using trace::Trace;

namespace {

struct SweepCli {
  RunOptions run;
  std::vector<std::string> parameters;  // -p NAME=V1,V2
  std::vector<std::string> env;         // --env NAME=TEMPLATE
  int repeat = 1;
  std::string output_dir = "qprof_sweep";
  bool stop_on_failure = false;
  std::string metric;  // empty: the footprint (PSS is read by default)
  std::string format = "text";
  std::string unit;
  std::optional<double> at;
  std::string limit;
  std::string plot;
  bool fit = false;  // --fit: qprof fit on each point that ran
  fit::FitOptions fit_options;
};

// One run of the sweep: its point, its outcome, its trace (when one could be read back).
struct SweepRun {
  SweepPoint point;
  int repeat = 1;
  std::string path;
  int status = 0;
  std::unique_ptr<Trace> trace;
  std::string problem;                  // why there is no trace to read
  std::optional<fit::SavedLimits> fit;  // --fit: what qprof fit found at this point
};

// An environment variable set for one run, and put back as it was after it: the command inherits
// qprof's environment (execv), and nothing else runs in qprof between the runs.
class ScopedEnv {
 public:
  ScopedEnv(const std::string& name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name.c_str())) old_ = std::string(old);
    ::setenv(name.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_.c_str(), old_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// A model needs numbers: "8", "0.5", "1e3"; not "fp16".
bool all_numbers(const SweepParameter& p) {
  return std::all_of(p.values.begin(), p.values.end(), [](const std::string& v) {
    double d = 0;
    const auto r = std::from_chars(v.data(), v.data() + v.size(), d);
    return r.ec == std::errc() && r.ptr == v.data() + v.size();
  });
}

std::string point_words(const SweepPoint& p) {
  std::string out;
  for (const auto& [name, value] : p) out += (out.empty() ? "" : " ") + name + "=" + value;
  return out;
}

// The usage checks that need more than CLI11: parameters, placeholders, --env.
Result<std::vector<SweepParameter>> parse_request(const SweepCli& o, const std::vector<std::string>& command) {
  if (command.empty()) return Failure{"no command: qprof sweep -p NAME=V1,V2 -- CMD {NAME} ..."};
  std::vector<SweepParameter> parameters;
  for (const std::string& text : o.parameters) {
    Result<SweepParameter> p = parse_sweep_parameter(text);
    if (!p) return Failure{"-p: " + terminal_text(p.failure().message)};
    for (const SweepParameter& q : parameters) {
      if (q.name == p->name) return Failure{"-p " + p->name + " is given twice"};
    }
    parameters.push_back(std::move(*p));
  }
  for (const std::string& e : o.env) {
    const auto eq = e.find('=');
    if (eq == 0 || eq == std::string::npos || e.substr(0, eq).find_first_of("{}") != std::string::npos) {
      return Failure{"--env " + terminal_text(e) + ": not NAME=VALUE"};
    }
  }
  // A parameter whose placeholder appears nowhere is a typo: every run would be the same.
  for (const SweepParameter& p : parameters) {
    const std::string placeholder = "{" + p.name + "}";
    bool used = false;
    for (const std::string& a : command) used = used || a.find(placeholder) != std::string::npos;
    for (const std::string& e : o.env) used = used || e.find(placeholder) != std::string::npos;
    if (!used) return Failure{"-p " + p.name + ": " + placeholder + " appears nowhere in the command or --env"};
  }
  return parameters;
}

// The runs' table: one row per run, a column per parameter, its status and figures.
report::Table runs_table(const std::vector<SweepParameter>& parameters, const std::vector<SweepRun>& runs) {
  report::Table t;
  t.name = "sweep_runs";
  t.title = "Runs";
  using report::Cell;
  using report::Column;
  using report::Kind;
  for (const SweepParameter& p : parameters) t.columns.push_back(Column::of(p.name, p.name, Kind::text));
  t.columns.push_back(Column::of("repeat", "repeat", Kind::count));
  t.columns.push_back(Column::of("exit_status", "exit", Kind::count));
  t.columns.push_back(Column::of("duration", "duration", Kind::seconds));
  t.columns.push_back(Column::of("footprint", "footprint", Kind::bytes));
  t.columns.push_back(Column::of("peak_rss", "\u03a3 RSS peak", Kind::bytes));
  const bool fitted = std::any_of(runs.begin(), runs.end(), [](const SweepRun& r) { return r.fit.has_value(); });
  if (fitted) {
    t.columns.push_back(Column::of("fit_runs_in", "fit: runs in", Kind::bytes));
    t.columns.push_back(Column::of("fit_full_speed", "fit: full speed", Kind::bytes));
  }
  t.columns.push_back(Column::of("trace", "trace", Kind::text));
  const bool any_footprint = std::any_of(
      runs.begin(), runs.end(), [](const SweepRun& r) { return r.trace && has_metric(*r.trace, Metric::footprint); });
  t.columns[parameters.size() + 3].human = any_footprint;
  if (!any_footprint && std::any_of(runs.begin(), runs.end(), [](const SweepRun& r) { return r.trace != nullptr; })) {
    t.notes.push_back(analysis::choose_metric(std::nullopt, false, "these traces").fallback);
  }
  for (const SweepRun& r : runs) {
    std::vector<Cell> row;
    for (const auto& nv : r.point) row.push_back(Cell::string(nv.second));
    row.push_back(Cell::number(r.repeat));
    row.push_back(Cell::number(r.status));
    if (r.trace) {
      row.push_back(Cell::number(trace_duration(*r.trace)));
      const auto footprint = find_peak(*r.trace, Metric::footprint);
      const auto rss = find_peak(*r.trace, Metric::rss);
      row.push_back(footprint ? Cell::bytes(footprint->bytes) : Cell{});
      row.push_back(rss ? Cell::bytes(rss->bytes) : Cell{});
    } else {
      row.insert(row.end(), 3, Cell{});
    }
    if (fitted) {
      const auto size = [](const std::optional<Bytes>& b) { return b ? Cell::bytes(*b) : Cell{}; };
      row.push_back(r.fit ? size(r.fit->runs_in) : Cell{});
      row.push_back(r.fit ? size(r.fit->full_speed) : Cell{});
    }
    Cell trace = Cell::string(r.path);
    if (!r.problem.empty()) trace.note = r.problem;
    row.push_back(trace);
    t.rows.push_back(std::move(row));
  }
  return t;
}

// The command's environment at a point: --env's assignments, put back when the result goes.
std::vector<std::unique_ptr<ScopedEnv>> point_env(const SweepCli& o, const SweepPoint& point) {
  std::vector<std::unique_ptr<ScopedEnv>> env;
  for (const std::string& e : o.env) {
    const auto eq = e.find('=');
    env.push_back(std::make_unique<ScopedEnv>(e.substr(0, eq), fill_placeholders(e.substr(eq + 1), point)));
  }
  return env;
}

// --fit at one point: qprof fit on the same command, its JSON beside the trace (where compare
// --sweep finds it again), a line on stderr. Returns fit's exit status (0, or why it stopped).
int fit_point(const SweepCli& o, const std::vector<std::string>& command, SweepRun& run, const std::string& prefix) {
  fit::FitOptions options = o.fit_options;
  options.command = command;
  fit::FitReport r;
  {
    const auto env = point_env(o, run.point);
    const StdoutToStderr keep_stdout_for_the_table;
    r = fit::run_fit(options);
  }
  const std::string json_path = fit::saved_result_path(run.path);
  std::string line = prefix + ": fit: ";
  try {
    write_output(json_path, fit::json_report(r));
  } catch (const std::exception& e) {
    std::cerr << "qprof sweep: " << terminal_text(json_path) << ": " << terminal_text(e.what()) << '\n';
  }
  if (r.findings.runs || r.findings.full_speed) {
    run.fit =
        fit::SavedLimits{r.findings.runs ? std::optional<Bytes>(r.findings.runs->limit) : std::nullopt,
                         r.findings.full_speed ? std::optional<Bytes>(r.findings.full_speed->limit) : std::nullopt};
    if (run.fit->runs_in) line += "runs in " + human_bytes(*run.fit->runs_in);
    if (run.fit->full_speed)
      line += std::string(run.fit->runs_in ? ", " : "") + "full speed " + human_bytes(*run.fit->full_speed);
    const std::size_t runs = r.probes.size() + (r.baseline ? 1 : 0);
    line += " (" + std::to_string(runs) + (runs == 1 ? " run)" : " runs)");
  } else {
    line += "nothing found";
  }
  if (r.end != fit::FitEnd::searched && r.end != fit::FitEnd::runs_max) line += "; " + r.message;
  std::cerr << terminal_text(line + " -> " + json_path) << '\n';
  return r.end == fit::FitEnd::searched || r.end == fit::FitEnd::runs_max ? 0 : r.status;
}

// What one run left for the rest of the sweep: whether to go on, the status to end with.
// The signals that end a sweep as they end qprof run: the terminal's keys, a job manager's, a
// closed terminal. Passed on to the run's command, they also stop the runs to come.
bool is_stop_signal(int sig) { return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT; }

struct RunEnd {
  bool stop = false;
  int failure = 0;           // the run's (or its fit's) non-zero status
  bool unstartable = false;  // the command cannot be started: the same at every point
};

// One run of the command at a point (and, with --fit, fit after it), and its progress line.
RunEnd run_point(const SweepCli& o, const std::vector<std::string>& command, SweepRun& run, const std::string& prefix) {
  RunOptions options = o.run;
  record_metric(options, o.metric);
  options.command.clear();
  for (const std::string& a : command) options.command.push_back(fill_placeholders(a, run.point));
  try {
    run.path = create_fresh(run.path);  // never through a file or link already at the name
  } catch (const OutputError& e) {
    std::cerr << "qprof sweep: " << terminal_text(e.what()) << '\n';
    return {true, kUsageError, true};
  }
  options.output = run.path;
  options.quiet = true;
  options.live = false;
  RunReport report;
  {
    const auto env = point_env(o, run.point);
    const StdoutToStderr keep_stdout_for_the_table;
    run.status = run_profiled(options, &report);
  }
  if (!report.launched) {
    ::unlink(run.path.c_str());  // the empty file made for it
    std::cerr << "qprof sweep: the command could not be started; no more runs\n";
    return {true, run.status != 0 ? run.status : kUsageError, true};
  }
  if (!report.trace_error.empty()) {
    run.problem = "incomplete: " + report.trace_error;
  } else {
    try {
      run.trace = std::make_unique<Trace>(read_back(report));
    } catch (const std::exception& e) {
      run.problem = std::string("unreadable: ") + e.what();
    }
  }
  // The progress line: which point, how it ended, its figures, its trace.
  std::string line = prefix + (run.status == 0 ? ": ok" : ": FAILED, exit status " + std::to_string(run.status));
  if (run.trace) {
    line += ", " + human_seconds(trace_duration(*run.trace));
    if (const auto f = find_peak(*run.trace, Metric::footprint)) line += ", footprint " + human_bytes(f->bytes);
    if (const auto p = find_peak(*run.trace, Metric::rss)) line += ", \u03a3 RSS peak " + human_bytes(p->bytes);
  }
  line += " -> " + run.path + (run.problem.empty() ? "" : " (" + run.problem + ")");
  std::cerr << terminal_text(line) << '\n';
  RunEnd end;
  end.failure = run.status;
  const bool interrupted = is_stop_signal(report.signal) || is_stop_signal(run.status - 128);
  if (o.fit && run.status == 0 && !interrupted && run.trace) {
    end.failure = fit_point(o, options.command, run, prefix);
    end.stop = is_stop_signal(end.failure - 128);
  }
  if (interrupted || end.stop) std::cerr << "qprof sweep: interrupted; no more runs\n";
  if (run.status != 0 && o.stop_on_failure) std::cerr << "qprof sweep: --stop-on-failure: no more runs\n";
  end.stop = end.stop || interrupted || (run.status != 0 && o.stop_on_failure);
  return end;
}

// The runs' table and, over one numeric parameter, the model, on stdout. Returns 2 where the
// model could not be made or drawn, else 0.
int print_sweep(const SweepCli& o, const std::vector<SweepParameter>& parameters, const std::vector<SweepRun>& runs) {
  report::Document doc;
  doc.tables.push_back(runs_table(parameters, runs));
  std::size_t failed = 0;
  for (const SweepRun& r : runs) failed += r.status != 0 ? 1 : 0;
  if (failed > 0) doc.tables.front().notes.push_back(std::to_string(failed) + " run(s) failed: left out of the model");
  int status = 0;
  if (parameters.size() == 1 && !all_numbers(parameters.front())) {
    doc.tables.front().notes.push_back("the values of " + parameters.front().name + " are not all numbers: no model");
  } else if (parameters.size() == 1) {
    std::vector<LabelledTrace> traces;
    for (const SweepRun& r : runs) {
      if (r.trace) traces.push_back({point_name(r.point), r.trace.get()});
    }
    SweepModelRequest request{parameters.front().name, o.at, o.limit, o.plot, o.metric == "rss"};
    if (!traces.empty() && add_sweep_model(doc, traces, request, "qprof sweep") != 0) status = kUsageError;
  } else {
    doc.tables.front().notes.push_back(
        "a grid has no model: qprof compare --sweep NAME on the traces of one line of it");
  }
  std::cout << report::render(doc, format_of(o.format), {unit_of(o.unit)});
  return status;
}

Result<int> sweep_action(const SweepCli& o, const std::vector<std::string>& command) {
  Result<std::vector<SweepParameter>> request = parse_request(o, command);
  if (!request) return request.failure();
  const std::vector<SweepParameter>& parameters = *request;
  if (auto checked = check_sampling_options(o.run); !checked) return checked.failure();
  std::error_code ec;
  std::filesystem::create_directories(o.output_dir, ec);
  if (ec) return Failure{"--output-dir " + terminal_text(o.output_dir) + ": " + ec.message()};
  if (o.fit) {
    // Said before the first run, not after it: fit needs memory cgroups of its own.
    std::string why_not;
    if (!fit::ProbeGroup::create(why_not)) return Failure{"--fit: " + terminal_text(fit::no_cgroup_message(why_not))};
  }
  const std::vector<SweepPoint> points = sweep_grid(parameters);
  const std::size_t total = points.size() * static_cast<std::size_t>(o.repeat);
  std::vector<SweepRun> runs;
  int first_failure = 0;
  bool stopped = false;
  for (std::size_t k = 0; k < points.size() && !stopped; ++k) {
    for (int r = 1; r <= o.repeat && !stopped; ++r) {
      SweepRun run;
      run.point = points[k];
      run.repeat = r;
      run.path =
          o.output_dir + "/" + point_name(points[k]) + (o.repeat > 1 ? ",repeat=" + std::to_string(r) : "") + ".dat";
      std::string prefix = "qprof sweep: [" + std::to_string(runs.size() + 1) + "/" + std::to_string(total) + "] " +
                           point_words(points[k]);
      if (o.repeat > 1) prefix += " (repeat " + std::to_string(r) + ")";
      const RunEnd end = run_point(o, command, run, prefix);
      if (end.unstartable) return end.failure;
      if (end.failure != 0 && first_failure == 0) first_failure = end.failure;
      stopped = end.stop;
      runs.push_back(std::move(run));
    }
  }
  const int printed = print_sweep(o, parameters, runs);
  return first_failure != 0 ? first_failure : printed;
}

}  // namespace

Command add_sweep(CLI::App& app, const Invocation& invocation) {
  auto opts = std::make_shared<SweepCli>();
  CLI::App* sweep =
      app.add_subcommand("sweep", "Run a command once per value of a parameter and model its memory against it");
  sweep->footer(
      "Usage: qprof sweep -p NAME=V1,V2,... [-p NAME2=...] [OPTIONS] -- CMD [ARGS...]\n"
      "{NAME} anywhere in CMD, its arguments and --env values is replaced by the point's value; each\n"
      "argument stays one argument (no shell: spaces and quotes in a value are passed as they are).\n"
      "Several -p make a grid (every combination, the first -p varying slowest). Each run's trace is\n"
      "DIR/NAME=VALUE[,NAME2=VALUE2][,repeat=R].dat; a progress line per run goes to stderr, the\n"
      "command's stdout too. At the end, on stdout: a row per run (its values, exit status, duration,\n"
      "footprint, Σ RSS peak, trace), and over one parameter the model of each\n"
      "figure (qprof compare --sweep: linear or power law, R², --at, --limit). A run that fails is\n"
      "recorded and the sweep goes on (--stop-on-failure: it stops there); failed runs are left out\n"
      "of the model. --fit also runs qprof fit at each point that succeeded (it needs the right to\n"
      "create memory cgroups): its JSON goes beside the trace (DIR/NAME=VALUE.fit.json), the runs'\n"
      "table and the model gain its smallest and full-speed limits, and --limit is solved on the\n"
      "full-speed limit's model.\n"
      "Exit status: 0 when every run succeeded; else the exit status of the first run (or fit) that\n"
      "failed;\n"
      "2 for usage errors or a command that cannot be started.");
  sweep->add_option("-p,--param", opts->parameters, "A parameter and its values, NAME=V1,V2,... (repeatable: a grid)")
      ->required()
      ->allow_extra_args(false);
  sweep
      ->add_option("--env", opts->env,
                   "Set NAME=VALUE in the command's environment; {NAME} placeholders filled (repeatable)")
      ->allow_extra_args(false);
  sweep->add_option("--repeat", opts->repeat, "Run each point N times: the model takes the median, the spread the ±")
      ->check(CLI::Range(1, 1000));
  sweep->add_option("-d,--output-dir", opts->output_dir,
                    "Directory of the traces (default qprof_sweep, created if missing)");
  sweep->add_flag("--stop-on-failure", opts->stop_on_failure, "Stop at the first run that fails");
  sweep
      ->add_option("--metric", opts->metric,
                   "The figure --limit is solved on and --plot draws: the footprint (default: shared pages once; PSS "
                   "is read by default) where recorded, else Σ RSS; rss: Σ RSS's peak, as mprof counts it; pss, "
                   "uss, all: also read PSS with --no-pss")
      ->check(run_metric_check());
  sweep->add_flag("--fit", opts->fit,
                  "Also find, at each point, the smallest memory limit the command runs in and the one at full speed "
                  "(qprof fit; needs the right to create memory cgroups)");
  sweep
      ->add_option("--fit-max-slowdown", opts->fit_options.max_slowdown,
                   "With --fit: a probe longer than this many times the point's baseline is too slow (default 4)")
      ->transform(factor_check(1.0, 1e6));
  sweep
      ->add_option("--fit-runs-max", opts->fit_options.runs_max,
                   "With --fit: runs of fit at each point, its baseline included (default 16)")
      ->check(CLI::Range(2, 1000));
  sweep->add_option("--at", opts->at, "Also predict each figure at this value of the parameter");
  sweep
      ->add_option("--limit", opts->limit,
                   "Solve for the largest value whose predicted footprint (or Σ RSS peak) fits SIZE or PCT of the "
                   "limit in force (default: the limit in force)")
      ->check(budget_check());
  sweep->add_option("--plot", opts->plot,
                    "Over one parameter: draw the footprint (else Σ RSS peak) against it into OUT (.png, .svg, .pdf): "
                    "the runs, the fit, the limit and the solved value");
  sweep->add_option("--format", opts->format, "text (default), md, csv (the model; the runs without one) or json")
      ->check(format_check());
  sweep->add_option("--unit", opts->unit, "Unit of sizes: B, KiB, MiB, GiB, KB, MB, GB")->check(unit_check());
  add_sampling_options(*sweep, opts->run);
  sweep->prefix_command();
  sweep->allow_extras();
  return {sweep,
          [opts, sweep, &invocation]() -> Result<int> { return sweep_action(*opts, invocation.command(*sweep)); }};
}

}  // namespace qprof::cli
