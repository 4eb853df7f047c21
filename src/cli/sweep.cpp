// SPDX-License-Identifier: Apache-2.0
// qprof sweep -p NAME=V1,V2,... [-p ...] [--env NAME=TEMPLATE] [--repeat N] -- CMD {NAME} ...
// Runs the command once per point of the grid (and per repeat) under qprof, one trace per run
// named by its values (runs/sweep_runs), then prints the runs and, over one parameter, the model
// of each figure.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>

#include "commands.hpp"
#include "profiled.hpp"
#include "stderr_speaker.hpp"
#include "qprof/analysis/sweep_grid.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/common/text_wrap.hpp"
#include "qprof/fit/fit.hpp"
#include "qprof/fit/probe_group.hpp"
#include "qprof/plot/gnuplot.hpp"
#include "qprof/plot/sweep_chart.hpp"
#include "qprof/runs/sweep_runs.hpp"
#include "sweep_table.hpp"

namespace qprof::cli {
using analysis::parse_sweep_parameter;
using analysis::SweepParameter;

namespace {

struct SweepCli {
  runs::SweepRequest request;           // the sampling options, --env, --repeat, -d, --fit…
  std::vector<std::string> parameters;  // -p NAME=V1,V2
  std::string metric;                   // empty: the footprint (PSS is read by default)
  std::string format = "text";
  std::string unit;
  std::optional<double> at;
  std::string limit;
  std::string plot;
};

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
  for (const std::string& e : o.request.env) {
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
    for (const std::string& e : o.request.env) used = used || e.find(placeholder) != std::string::npos;
    if (!used) return Failure{"-p " + p.name + ": " + placeholder + " appears nowhere in the command or --env"};
  }
  return parameters;
}

Result<int> sweep_action(SweepCli& o, const std::vector<std::string>& command) {
  Result<std::vector<SweepParameter>> parameters = parse_request(o, command);
  if (!parameters) return parameters.failure();
  runs::SweepRequest& request = o.request;
  if (auto checked = check_sampling_options(request.run); !checked) return checked.failure();
  // A grid has no model, so no chart: said before the first run, not by a chart left unwritten.
  if (!o.plot.empty() && parameters->size() > 1) {
    return Failure{"--plot draws the model of one parameter; a grid (" + std::to_string(parameters->size()) +
                   " -p) has none: sweep one parameter to draw it"};
  }
  // The chart's program, before the first run: not a sweep's minutes of runs and then no chart.
  if (!o.plot.empty()) {
    if (const auto gnuplot = plot::find_gnuplot("gnuplot", "--plot"); !gnuplot) return gnuplot.failure();
  }
  std::error_code ec;
  std::filesystem::create_directories(request.output_dir, ec);
  if (ec) return Failure{"--output-dir " + terminal_text(request.output_dir) + ": " + ec.message()};
  if (request.fit) {
    // Said before the first run, not after it: fit needs memory cgroups of its own.
    if (auto group = fit::ProbeGroup::create(); !group) {
      return Failure{"--fit: " + terminal_text(fit::no_cgroup_message(group.failure().message))};
    }
  }
  record_metric(request.run, o.metric);
  request.command = command;
  request.parameters = *parameters;
  request.speaker = stderr_speaker();
  const Result<runs::SweepRuns> done = runs::run_sweep(
      request, [say = stderr_speaker("sweep")](const std::string& line) { say.line(terminal_text(line)); });
  if (!done) return done.failure();
  const SweepModelRequest model{request.parameters.front().name, o.at, o.limit, o.plot, o.metric == "rss"};
  const SweepDocument printed = sweep_document(request.parameters, done->runs, model);
  report::RenderOptions options{unit_of(o.unit)};
  // Text fits the terminal (80 columns into a pipe): notes and the answer wrap, a wide table
  // leaves columns out and names them.
  options.text_width = output_columns(STDOUT_FILENO);
  options.wider = "--format csv, json and md show them";
  std::cout << report::render(printed.doc, format_of(o.format), options);
  // An interruption's status wins, then the first failed run's, then qprof's own 2.
  const int status = done->interrupted != 0 ? done->interrupted : done->first_failure;
  if (!printed.model) return Failure{printed.model.failure().message, status != 0 ? status : kUsageError};
  return status;
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
      "failed; 127 or 126 for a command that cannot be started (not found, not executable: no more\n"
      "runs); 2 for usage errors. Interrupted (SIGINT, SIGTERM, SIGHUP, SIGQUIT): no more runs, the\n"
      "table of the runs done, and 128+N.");
  sweep->add_option("-p,--param", opts->parameters, "A parameter and its values, NAME=V1,V2,... (repeatable: a grid)")
      ->required()
      ->allow_extra_args(false);
  sweep
      ->add_option("--env", opts->request.env,
                   "Set NAME=VALUE in the command's environment; {NAME} placeholders filled (repeatable)")
      ->allow_extra_args(false);
  sweep
      ->add_option("--repeat", opts->request.repeat,
                   "Run each point N times: the model takes the median, the table the range (min–max)")
      ->check(CLI::Range(1, 1000));
  sweep->add_option("-d,--output-dir", opts->request.output_dir,
                    "Directory of the traces (default qprof_sweep, created if missing)");
  sweep->add_flag("--stop-on-failure", opts->request.stop_on_failure, "Stop at the first run that fails");
  sweep
      ->add_option("--metric", opts->metric,
                   "The figure --limit is solved on and --plot draws: the footprint (default: shared pages once; PSS "
                   "is read by default) where recorded, else Σ RSS; rss: Σ RSS's peak, as mprof counts it; pss, "
                   "uss, all: also read PSS with --no-pss")
      ->check(run_metric_check());
  sweep->add_flag("--fit", opts->request.fit,
                  "Also find, at each point, the smallest memory limit the command runs in and the one at full speed "
                  "(qprof fit; needs the right to create memory cgroups)");
  sweep
      ->add_option("--fit-max-slowdown", opts->request.fit_options.max_slowdown,
                   "With --fit: a probe longer than this many times the point's baseline is too slow (default 4)")
      ->transform(factor_check(1.0, 1e6));
  sweep
      ->add_option("--fit-runs-max", opts->request.fit_options.runs_max,
                   "With --fit: runs of fit at each point, its baseline included (default 16)")
      ->check(CLI::Range(2, 1000));
  sweep->add_option("--at", opts->at, "Also predict each figure at this value of the parameter");
  sweep
      ->add_option("--limit", opts->limit,
                   "Solve for the largest value whose predicted footprint (or Σ RSS peak) fits SIZE or PCT of the "
                   "limit in force (default: the limit in force)")
      ->check(budget_check());
  sweep
      ->add_option("--plot", opts->plot,
                   "Over one parameter: draw the footprint (else Σ RSS peak) against it into OUT (.png, .svg, .pdf): "
                   "the runs, the fit, the limit and the solved value")
      ->check([](const std::string& out) -> std::string {
        return plot::sweep_chart_output(out) ? "" : "'" + out + "': " + std::string(plot::kSweepChartFiles);
      });
  sweep->add_option("--format", opts->format, "text (default), md, csv (the model; the runs without one) or json")
      ->check(format_check());
  sweep->add_option("--unit", opts->unit, "Unit of sizes: B, KiB, MiB, GiB, KB, MB, GB")->check(unit_check());
  add_sampling_options(*sweep, opts->request.run);
  sweep->prefix_command();
  sweep->allow_extras();
  return {sweep,
          [opts, sweep, &invocation]() -> Result<int> { return sweep_action(*opts, invocation.command(*sweep)); }};
}

}  // namespace qprof::cli
