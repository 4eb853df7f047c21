// SPDX-License-Identifier: Apache-2.0
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <system_error>

#include "stderr_speaker.hpp"
#include "qprof/common/output_file.hpp"
#include "qprof/common/safe_text.hpp"
#include "commands.hpp"
#include "label_count.hpp"
#include "job_trace_file.hpp"
#include "qprof/analysis/job.hpp"
#include "qprof/analysis/timeline.hpp"
#include "qprof/trace/format.hpp"
#include "profiled.hpp"
#include "qprof/plot/plot.hpp"

namespace qprof::cli {
using analysis::Align;
using analysis::clock_skew_note;
using analysis::job_clock;
using analysis::rank_label;
using trace::Trace;

namespace {

struct PlotArgs {
  std::vector<std::string> files;
  std::optional<std::string> output;
  std::optional<std::string> size, window, unit, panels;
  std::optional<double> render_timeout;
  std::vector<std::string> labels;
  bool no_markers = false;
  bool sum = false;  // the files are one job's ranks: their sum, each rank faint underneath
  std::string align = "wall";
  plot::PlotOptions opts;
};

// Reads the ranks, writes their sum; the inputs are the sum first, then each rank (faint).
// `footprint`: the chart draws the footprint (the note on footprints of two kinds concerns it).
Result<void> job_inputs(const std::vector<std::string>& files, const std::vector<std::string>& labels, Align align,
                        bool footprint, JobTraceFile& tmp, std::vector<plot::Input>& inputs) {
  // Each rank read reduced (its label, its start), the sum written as the files stream: flat in
  // memory. A rank that cannot be read twice, or GPU devices, have every rank read whole.
  std::vector<Trace> traces;
  traces.reserve(files.size());
  for (const std::string& f : files) {
    auto reduced = trace::read_trace_reduced(f, analysis::kTimeSlack);
    traces.push_back(reduced ? std::move(*reduced) : trace::read_trace(f));
  }
  std::vector<const Trace*> ranks;
  for (const Trace& t : traces) ranks.push_back(&t);
  if (const auto twice = analysis::repeated_rank(ranks)) return Failure{"--sum: " + *twice};
  if (const auto jobs = analysis::several_jobs_note(ranks)) stderr_speaker("plot").line("warning: " + *jobs);
  if (const auto kinds = analysis::mixed_footprint_note(ranks); kinds && footprint) {
    stderr_speaker("plot").line("note: " + *kinds);
  }
  if (!analysis::job_streams(ranks)) {
    for (Trace& t : traces) {
      if (t.reduced) t = trace::read_trace(t.source);
    }
  }
  if (auto written = write_job_file(ranks, align, false, "--sum: ", tmp); !written) return written.failure();
  // On wall-clock time every line shares the sum's axis, so that a rank that started later is
  // drawn where its memory counted in the sum; with --align start each is drawn from its start.
  std::optional<Seconds> origin;
  if (align == Align::wall) origin = job_clock(ranks, align).origin;
  // Each rank is an input of its own below, whose end record the chart's reading checks.
  inputs.push_back({tmp.path, "job (" + std::to_string(files.size()) + " ranks, summed)", false, origin, true});
  for (std::size_t i = 0; i < files.size(); ++i) {
    inputs.push_back({files[i], i < labels.size() ? labels[i] : rank_label(traces[i]), true, origin});
  }
  if (const auto skew = clock_skew_note(ranks)) stderr_speaker("plot").line("warning: " + *skew);
  return {};
}

Failure usage(const std::string& what) {
  return Failure{what +
                 "\nUsage: qprof plot FILE [FILE...] [-o OUT.png|.svg|.pdf|-] [OPTIONS] (see qprof plot --help)"};
}

// The options CLI11 cannot check alone, into a.opts: the output and its format, --size,
// --window, --unit, --panels, the labels for `traces` traces.
Result<void> check_options(PlotArgs& a, std::size_t traces) {
  plot::PlotOptions& o = a.opts;
  // Without -o, a text chart on stdout, a terminal or a pipe (80 columns wide there).
  o.output = a.output.value_or("-");
  if (!plot::format_for(o.output)) {
    return usage("cannot tell the format of '" + o.output +
                 "' (-o): use a .png, .svg or .pdf file, or - for a text chart");
  }
  if (a.size) {
    const auto s = plot::parse_size_spec(*a.size);
    if (!s)
      return usage("--size " + *a.size +
                   ": expected WIDTHxHEIGHT from 20x10 to 20000x20000, such as 1600x900 (pixels; characters for a "
                   "text chart)");
    o.width = s->first;
    o.height = s->second;
  }
  if (a.window) {
    const auto w = plot::parse_window(*a.window);
    if (!w) {
      return usage("--window " + *a.window +
                   ": expected T0,T1 from the start (T0 < T1; either may be left out), each " + duration_forms());
    }
    o.from = w->first;
    o.to = w->second;
  }
  if (a.unit) {
    const auto u = parse_display_unit(*a.unit);
    if (!u || (*u != Unit::MiB && *u != Unit::GiB && *u != Unit::MB && *u != Unit::GB)) {
      return usage("--unit " + *a.unit + ": one of MiB, GiB, MB, GB (M and G: MiB and GiB)");
    }
    o.unit = u;
  }
  if (a.panels) {
    const auto p = plot::parse_panels(*a.panels);
    if (!p) {
      std::string names;  // every panel, from the enum: a new one cannot be left out here
      for (int i = 0; i <= static_cast<int>(plot::Panel::disk); ++i) {
        names += (names.empty() ? "" : ", ") + std::string(plot::panel_name(static_cast<plot::Panel>(i)));
      }
      return usage("--panels " + *a.panels + ": a comma list of " + names + " (such as memory,cpu)");
    }
    o.panels = *p;
  }
  if (const auto labels = too_many_labels(a.labels.size(), traces, "trace")) return usage(*labels);
  o.markers = !a.no_markers;
  if (a.render_timeout) o.render_timeout = *a.render_timeout;  // checked by seconds_check
  return {};
}

Result<int> run_plot(PlotArgs& a, const Invocation& invocation) {
  std::vector<std::string> files = a.files;
  if (invocation.had_dashdash)
    files.insert(files.end(), invocation.after_dashdash.begin(), invocation.after_dashdash.end());
  if (files.empty()) {
    // As mprof plot and qprof peak: the newest trace here.
    const auto newest = newest_trace();
    if (!newest) return usage("no trace given, and no qprof_*.dat or mprofile_*.dat here");
    files.push_back(*newest);
    stderr_speaker("plot").line("drawing the newest trace here, " + terminal_text(*newest));
  }
  if (Result<void> checked = check_options(a, files.size()); !checked) return checked.failure();
  plot::PlotOptions o = a.opts;
  o.warn = warn_on_stderr;

  std::vector<plot::Input> inputs;
  JobTraceFile job_file;
  if (Result<void> checked = refuse_output_over(o.output, files); !checked) {
    return Failure{terminal_text(checked.failure().message)};
  }
  if (!o.script.empty()) {  // the script is an output too: never over a trace or the chart
    std::vector<std::string> others = files;
    if (o.output != "-") others.push_back(o.output);
    if (Result<void> checked = refuse_output_over(o.script, others); !checked) {
      return Failure{"--script: " + terminal_text(checked.failure().message)};
    }
  }
  try {
    if (a.sum) {
      if (files.size() < 2) return usage("--sum: give the traces of a job's ranks (two or more)");
      if (o.facet) return usage("--sum draws one overlay; --facet draws a panel per rank: choose one");
      const auto read = job_inputs(files, a.labels, a.align == "start" ? Align::start : Align::wall,
                                   o.metric.empty() || o.metric == "footprint", job_file, inputs);
      if (!read) return read.failure();
    } else {
      for (std::size_t i = 0; i < files.size(); ++i)
        inputs.push_back({files[i], i < a.labels.size() ? a.labels[i] : ""});
    }
    // gnuplot's own words after a failure are lines: kept as lines, each made safe.
    if (Result<void> drawn = plot::plot(inputs, o); !drawn) return Failure{terminal_lines(drawn.failure().message)};
  } catch (const trace::ParseError& e) {
    return Failure{terminal_text(e.what())};
  } catch (const std::system_error& e) {
    return Failure{terminal_text(e.what())};
  }
  return 0;
}

}  // namespace

Command add_plot(CLI::App& app, const Invocation& invocation) {
  auto a = std::make_shared<PlotArgs>();
  CLI::App* cmd = app.add_subcommand(
      "plot", "Draw memory over time of one trace or several (qprof's or mprof's .dat) with gnuplot");
  cmd->footer(
      "Usage: qprof plot FILE [FILE...] [-o OUT] [OPTIONS]\n"
      "Several files are overlaid, each from its own start (or one panel each with --facet).\n"
      "Without FILE, the newest qprof_*.dat or mprofile_*.dat here. Without -o, a text chart on stdout\n"
      "(80 columns wide when stdout is not a terminal). Exit status 2 on bad options or input, or when gnuplot\n"
      "is missing, fails or runs past --render-timeout (it is killed; it also dies with qprof). A time more than\n"
      "about 31.7 years (1e9 s) from a trace's start is an error (FILE:LINE), as is a line longer than 1 MiB.");
  cmd->add_option("files", a->files, "Traces: .dat files written by qprof run or mprof run");
  cmd->add_option("-o,--output", a->output,
                  "Chart file, by extension: .png, .svg or .pdf; - draws a text chart on stdout (the default)");
  cmd->add_option("--size", a->size, "WIDTHxHEIGHT in pixels (characters for a text chart); default 1280 wide");
  cmd->add_option("--title", a->opts.title, "Chart title (default: the command line of a single trace)");
  cmd->add_option("--unit", a->unit, "Memory unit: MiB, GiB, MB or GB, or M, G (default: MiB, GiB from 10 GiB)");
  cmd->add_option("--window", a->window,
                  "T0,T1: only this part of the run, in seconds from the start (\"T0,\" or \",T1\" leave a side open)");
  cmd->add_flag("--no-markers", a->no_markers, "No checkpoints, stages or exit annotations");
  cmd->add_option(
         "--label", a->labels,
         "Name of a trace in the legend, one per use in file order, or a comma list (default: the file name's stem)")
      ->allow_extra_args(false)
      ->delimiter(',');
  cmd->add_option(
      "--metric", a->opts.metric,
      "The memory series drawn for each trace: footprint (default where every trace recorded it: the "
      "cgroup's charge where the tree had one, else Σ PSS; filled, its peak annotated, Σ RSS a thin line), rss "
      "(the default otherwise: Σ RSS as mprof counts it and draws it), unreclaimable (its anonymous and shared "
      "memory), "
      "pss, uss, gpu, cgroup (the charge, page cache included), anon, file, shmem, swap (the tree's memory "
      "kinds), or dir:NAME (the size of a --watch-dir directory)");
  cmd->add_flag("--children", a->opts.children,
                "Also one line per process of the tree (traces recorded with qprof run -M)");
  CLI::Option* sum =
      cmd->add_flag("--sum", a->sum,
                    "The traces are one job's ranks (torchrun, mpirun, srun): draw their sum, each rank dashed "
                    "underneath (--facet instead: a panel per rank)");
  cmd->add_option("--align", a->align,
                  "With --sum: wall (default: the ranks' wall-clock times) or start (each from its own start)")
      ->check(CLI::IsMember({"wall", "start"}))
      ->needs(sum);  // without it nothing is laid on one axis: refused, not ignored
  cmd->add_flag("--facet", a->opts.facet, "One panel per trace, sharing the axes, instead of overlaying them");
  cmd->add_flag("-s,--trend", a->opts.trend,
                "Also draw the fitted trend of Σ RSS (and of Σ PSS where recorded) over the steady part of each run, "
                "dashed, with its slope and R² (as mprof plot -s; see qprof-run(1), TREND)");
  cmd->add_option(
      "--panels", a->panels,
      "Stacked panels, top to bottom, a comma list of memory, gpu, cpu, io, memory-kinds, tasks, vsz, gpu-util, "
      "disk (default: "
      "memory, and gpu when recorded; disk: the --watch-dir directories)");
  cmd->add_option("--style", a->opts.style,
                  "A gnuplot file loaded after qprof's style (plot/qprof.gp), to change the look");
  cmd->add_option("--script", a->opts.script, "Also write the complete gnuplot script (data included) to this file");
  cmd->add_option("--gnuplot", a->opts.gnuplot, "The gnuplot program (default: gnuplot, found on PATH)");
  cmd->add_option(
         "--render-timeout", a->render_timeout,
         "Seconds gnuplot may take to draw before it is killed and the chart fails (exit 2); default 30 s plus "
         "1 s per 20000 data points sent")
      ->transform(seconds_check(0.0, 86400.0, false));
  return {cmd, [a, &invocation] { return run_plot(*a, invocation); }};
}

}  // namespace qprof::cli
