// SPDX-License-Identifier: Apache-2.0
// qprof fit -- CMD: the smallest memory limit the command runs in (src/fit does the work; this
// file reads the options, shows progress and writes the result where it was asked for).
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <iostream>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "fit_scope.hpp"
#include "help_examples.hpp"
#include "profiled.hpp"
#include "stderr_speaker.hpp"
#include "qprof/common/output_file.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/common/stdout_to_stderr.hpp"
#include "qprof/common/text_wrap.hpp"
#include "qprof/common/units.hpp"
#include "qprof/fit/fit.hpp"
#include "qprof/fit/report.hpp"
#include "qprof/fit/text_width.hpp"
#include "qprof/plot/gnuplot.hpp"
#include "qprof/plot/fit_chart.hpp"
#include "qprof/plot/plot.hpp"
#include "qprof/report/quark_yaml.hpp"

namespace qprof::cli {
namespace {

struct FitCli {
  fit::FitOptions fit;
  std::string resolution;
  std::string margin;                      // --margin PCT: the requests'
  double request_margin = kDefaultMargin;  // --margin, parsed
  std::string json, csv, plot;
  // --gpu[=INDEX]: the GPU's index ("0" for a bare --gpu); empty: host memory. A string: CLI11
  // 2.1's integer flags count their uses rather than take the value.
  std::string gpu;
  bool quiet = false;
};

// "16MiB", "5%" or "16MiB,5%" (the larger of the two at each limit): one SIZE and one PCT at
// most, so that no part silently overrides another.
Result<fit::Resolution> parse_resolution(const std::string& spec) {
  const std::string usage = "--resolution: expected SIZE, PCT (5%) or one of each (16MiB,5%), got " +
                            terminal_text(spec) + "; SIZE is " + size_forms();
  const std::string once = ": give one SIZE, one PCT (5%), or one of each (16MiB,5%)";
  fit::Resolution r{0, 0};
  bool size_given = false, pct_given = false;
  std::vector<std::string> parts{""};  // "5%," is two parts, the second empty
  for (char c : spec) {
    if (c == ',') {
      parts.emplace_back();
    } else {
      parts.back().push_back(c);
    }
  }
  for (const std::string& part : parts) {
    if (part.empty()) return Failure{usage};
    if (part.back() == '%') {
      double pct = 0;
      const char* end = part.data() + part.size() - 1;
      const auto parsed = std::from_chars(part.data(), end, pct);
      if (parsed.ec != std::errc() || parsed.ptr != end) return Failure{usage};
      if (pct_given) return Failure{"--resolution: more than one PCT in " + terminal_text(spec) + once};
      if (!(pct > 0 && pct < 100)) {
        return Failure{"--resolution: PCT must be above 0% and below 100%, got " + terminal_text(part)};
      }
      r.fraction = pct / 100;
      pct_given = true;
    } else if (const auto size = parse_size(part)) {
      if (size_given) return Failure{"--resolution: more than one SIZE in " + terminal_text(spec) + once};
      if (*size == 0) return Failure{"--resolution: SIZE must be more than 0, got " + terminal_text(part)};
      r.floor = *size;
      size_given = true;
    } else {
      return Failure{usage};
    }
  }
  return r;
}

// Text to FILE, or stdout for '-'.
Result<void> write_result(const std::string& path, const std::string& text, const char* option) {
  if (path == "-") {
    std::cout << text << std::flush;
    return {};
  }
  if (Result<void> written = qprof::write_output(path, text); !written) {
    return Failure{std::string(option) + ": " + terminal_text(written.failure().message)};
  }
  return {};
}

plot::FitChart chart_of(const fit::FitReport& r) {
  plot::FitChart c;
  c.command = r.command;
  c.baseline_seconds = r.baseline ? r.baseline->run.seconds : 0;
  c.cutoff_seconds = r.cutoff_s;
  const auto in_mib = [](Bytes b) { return static_cast<double>(b) / (1024.0 * 1024.0); };
  for (const fit::Probe& p : r.probes) {
    using K = plot::FitChartPoint;
    const K::Kind kind = p.outcome == fit::Outcome::completed    ? K::completed
                         : p.outcome == fit::Outcome::too_slow   ? K::too_slow
                         : p.outcome == fit::Outcome::oom_killed ? K::oom_killed
                         : p.outcome == fit::Outcome::cuda_oom   ? K::oom_killed
                                                                 : K::failed;
    c.points.push_back({in_mib(p.limit), p.seconds, kind});
  }
  if (r.baseline)  // fit --gpu: charge_peak is the tree's peak on the device
    c.points.push_back({in_mib(r.baseline->charge_peak), r.baseline->run.seconds, plot::FitChartPoint::completed});
  char slowdown[32];
  std::snprintf(slowdown, sizeof slowdown, "within %gx", r.max_slowdown);
  if (r.probes.empty()) return c;  // no limited run: no limit to mark
  if (r.findings.runs) c.marks.push_back({"runs in", in_mib(r.findings.runs->limit)});
  if (r.findings.within_slowdown) c.marks.push_back({slowdown, in_mib(r.findings.within_slowdown->limit)});
  if (r.findings.full_speed) c.marks.push_back({"full speed", in_mib(r.findings.full_speed->limit)});
  return c;
}

// qprof's own CPU time over the runs, and the part of it the kernel's eviction took.
void say_cost(const fit::FitReport& r, std::size_t width, const Speaker& say) {
  char line[160];
  std::snprintf(line, sizeof line, "qprof fit: qprof's own CPU time: %.3f s over %.2f s of runs (%.2f %%)",
                r.qprof_cpu_s, r.probes_s, 100 * r.qprof_cpu_s / r.probes_s);
  say.text(fit::wrap_line(line, width, 4));
  // The kernel reclaims each probe's page cache in qprof's time when asked to evict it.
  if (r.eviction_cpu_s > 0) {
    std::snprintf(line, sizeof line,
                  "qprof fit: of it, evicting the probes' page cache: %.3f s (%.2f %% of the runs' time)",
                  r.eviction_cpu_s, 100 * r.eviction_cpu_s / r.probes_s);
    say.text(fit::wrap_line(line, width, 4));
  }
}

// The request as fit will run it, or the usage error that stops it before the first run.
Result<void> check_request(FitCli& o, std::vector<std::string> command, const CLI::App& self) {
  const std::vector<std::string> before_dashdash = self.remaining();
  if (!before_dashdash.empty() && before_dashdash.front().size() > 1 && before_dashdash.front()[0] == '-') {
    const std::string near = option_suggestion(self, before_dashdash.front());
    return Failure{"unknown option " + terminal_text(before_dashdash.front()) +
                   (near.empty() ? "" : "; did you mean " + near + "?") +
                   " (see qprof fit --help; a command starting with '-' goes after --)"};
  }
  if (command.empty()) return Failure{"no command given\nUsage: qprof fit [OPTIONS] [--] CMD [ARGS...]"};
  o.fit.command = std::move(command);
  if (!o.gpu.empty()) o.fit.gpu = std::stoi(o.gpu);  // digits: checked by CLI::Range
  if (!o.resolution.empty()) {
    const Result<fit::Resolution> r = parse_resolution(o.resolution);
    if (!r) return r.failure();
    o.fit.resolution = *r;
  }
  if (!o.margin.empty()) {
    const auto m = parse_margin(o.margin);
    if (!m) return Failure{"--margin: expected a percentage (15%, 0 to 1000), got " + terminal_text(o.margin)};
    o.request_margin = *m;
  }
  if (o.json == "-" && o.csv == "-") return Failure{"--json - and --csv - would both write to stdout: give one a file"};
  // A file that cannot be written fails before the first run, not after the last.
  const std::vector<std::string> outputs{o.json, o.csv, o.plot};
  for (const auto& [path, option] : {std::pair{o.json, "--json"}, {o.csv, "--csv"}, {o.plot, "--plot"}}) {
    if (path.empty() || path == "-") continue;
    std::vector<std::string> others = outputs;  // two results into one file: the second eats the first
    others.erase(std::find(others.begin(), others.end(), path));
    std::erase_if(others, [](const std::string& other) { return other.empty() || other == "-"; });
    Result<void> checked = refuse_output_over(path, others);
    if (checked) checked = check_output(path);
    if (!checked) return Failure{std::string(option) + ": " + terminal_text(checked.failure().message)};
  }
  if (!o.plot.empty() && (!plot::format_for(o.plot) || *plot::format_for(o.plot) == plot::Format::text)) {
    return Failure{"--plot: the chart's file must end in .png, .svg or .pdf"};
  }
  // A chart that cannot be drawn is said before the first run: not after minutes of probes.
  if (!o.plot.empty()) {
    if (const auto gnuplot = plot::find_gnuplot("gnuplot", "--plot"); !gnuplot) return gnuplot.failure();
  }
  return {};
}

// The results asked for: JSON, CSV, the chart. Each is tried; the Failure names every one that
// could not be written.
Result<void> write_results(const FitCli& o, const fit::FitReport& r) {
  std::string failed;
  const auto add = [&failed](const Result<void>& written) {
    if (!written) failed += (failed.empty() ? "" : "; ") + written.failure().message;
  };
  const bool has_result =
      r.end != fit::FitEnd::no_cgroup && r.end != fit::FitEnd::cannot_start && r.end != fit::FitEnd::gpu_refused;
  if (has_result && !o.json.empty()) add(write_result(o.json, fit::json_report(r), "--json"));
  if (has_result && !o.csv.empty()) add(write_result(o.csv, fit::csv_report(r), "--csv"));
  if (!o.plot.empty() && r.baseline) {
    try {  // what the standard library throws (a thread that cannot start)
      if (Result<void> drawn = plot::plot_fit(chart_of(r), o.plot, warn_on_stderr); !drawn) {
        add(Failure{"--plot: " + terminal_text(drawn.failure().message)});
      }
    } catch (const std::exception& e) {
      add(Failure{"--plot: " + terminal_text(e.what())});
    }
  }
  if (failed.empty()) return {};
  return Failure{failed};
}

Result<int> fit_action(FitCli& o, std::vector<std::string> command, const CLI::App& self) {
  if (Result<void> checked = check_request(o, std::move(command), self); !checked) return checked.failure();
  rerun_fit_in_user_scope_if_needed();  // returns where qprof may create its groups, or cannot be helped
  const bool show_progress = !o.quiet && ::isatty(STDERR_FILENO);
  // fit's lines carry "qprof fit: " themselves (they are wrapped to the terminal with it).
  const Speaker say = stderr_speaker("fit");
  const auto progress = [&](const fit::Progress& p) {
    char line[160];
    if (p.run == 1) {
      std::snprintf(line, sizeof line, "qprof fit: run 1: no limit (the baseline), %.1f s elapsed\n", p.elapsed_s);
    } else {
      std::snprintf(line, sizeof line, "qprof fit: run %d of about %d: limit %.1f MiB%s, %.1f s elapsed\n", p.run,
                    p.about, static_cast<double>(p.limit) / (1024.0 * 1024.0),
                    o.fit.gpu ? " of device memory per process" : "", p.elapsed_s);
    }
    say.text(line);
  };
  fit::FitReport r;
  {
    // A result on stdout (--json - or --csv -) is stdout's alone: the probes' own stdout goes to
    // stderr meanwhile, as qprof peak -- CMD does with the command's.
    std::optional<StdoutToStderr> results_on_stdout;
    if (o.json == "-" || o.csv == "-") results_on_stdout.emplace();
    r = fit::run_fit(o.fit, show_progress ? std::function<void(const fit::Progress&)>(progress) : nullptr);
  }
  r.request_margin = o.request_margin;
  // Every line fits the terminal (80 columns into a log): wide rows and findings wrap.
  const std::size_t width = output_columns(STDERR_FILENO);
  if (r.baseline && !o.quiet) say.text(fit::text_report(r, width));
  if (!r.message.empty()) say.text(fit::wrap_line("qprof fit: " + terminal_text(r.message), width, 4));
  if (!o.quiet && r.baseline && r.probes_s > 0) say_cost(r, width, say);
  // An output not written is qprof's failure; fit's own status (a failed or interrupted search) wins.
  if (Result<void> written = write_results(o, r); !written) {
    return Failure{written.failure().message, r.status != 0 ? r.status : kUsageError};
  }
  return r.status;
}

}  // namespace

Command add_fit(CLI::App& app, const Invocation& invocation) {
  auto opts = std::make_shared<FitCli>();
  CLI::App* fit = app.add_subcommand(
      "fit", "Find the smallest memory limit a command runs in, by running it repeatedly in a memory cgroup");
  fit->footer(
      "Usage: qprof fit [OPTIONS] [--] CMD [ARGS...]\n"
      "CMD runs once without a limit (the baseline: its duration, its cgroup's peak charge and its\n"
      "unreclaimable anonymous + shared memory), then again in a fresh memory cgroup below qprof's own\n"
      "with a limit and no swap, bisecting between the two figures. Each run's page cache is evicted\n"
      "after it. A run longer than --max-slowdown x the baseline is stopped as too slow. Reported: the\n"
      "smallest limit CMD runs in (not OOM-killed), the smallest it completes in within the slowdown,\n"
      "and the smallest at full speed (within 10 % of the fastest run). Needs the right to create memory\n"
      "cgroups: root, a delegated cgroup v2 subtree, or a Slurm job's cgroup (else exit 2).\n"
      "With --gpu[=INDEX] the device memory of NVIDIA GPU INDEX (default 0) is searched instead, per\n"
      "process, through a CUDA MPS daemon of qprof's own (CUDA_MPS_PINNED_DEVICE_MEM_LIMIT); host memory\n"
      "is not limited then (see docs/fit.md, \"GPU memory\").\n"
      "Exit status: 0; CMD's own when it fails in the unlimited run; 126/127 when it cannot start;\n"
      "128+N when signal N (Ctrl-C) stopped the search, after what was found so far; 2 for usage errors.");
  fit->prefix_command();  // everything from CMD on belongs to CMD, options included
  fit->allow_extras();
  fit->add_option(
         "--max-slowdown", opts->fit.max_slowdown,
         "Stop a run that takes longer than this many times the baseline, as too slow (default 4; at least 0.1 s)")
      ->transform(factor_check(1.0, 1e6));
  fit->add_option("--resolution", opts->resolution,
                  "How close each limit is found: SIZE (16MiB; a bare number is MiB; more than 0), PCT of the limit "
                  "(5%; above 0 and below 100%) or one of each (16MiB,5%: the larger); default 8MiB,2%");
  fit->add_option("--runs-max", opts->fit.runs_max, "Runs in all, the baseline included (default 16)")
      ->check(CLI::Range(2, 1000));
  fit->add_option("--margin", opts->margin,
                  "The requests printed for the full-speed and smallest limits: the limit plus PCT (default 15%, the "
                  "margin of Kubernetes' Vertical Pod Autoscaler)")
      ->type_name("PCT");
  fit->add_option("--json", opts->json, "Also write the result as JSON to FILE (- for stdout)");
  fit->add_option("--csv", opts->csv, "Also write the result as CSV to FILE (- for stdout)");
  fit->add_option("--plot", opts->plot, "Draw duration against limit to FILE (.png, .svg, .pdf) with gnuplot");
  fit->add_flag(
         "--gpu{0}", opts->gpu,
         "Search the device memory of NVIDIA GPU INDEX (--gpu=INDEX; --gpu: 0) through CUDA MPS, not host memory")
      ->check(CLI::Range(0, 1023).description(""))
      ->type_name("");
  fit->add_flag("--cold", opts->fit.cold,
                "Drop the files CMD reads from the page cache before each run, where another cgroup holds them "
                "(POSIX_FADV_DONTNEED: clean pages no process maps)");
  fit->add_flag("-q,--quiet", opts->quiet, "No progress lines and no table (errors only)");
  CLI::App* self = fit;
  return {fit, [opts, self, &invocation] { return fit_action(*opts, invocation.command(*self), *self); }};
}

}  // namespace qprof::cli
