#include <unistd.h>

#include <iostream>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "qprof/trace/format.hpp"
#include "qprof/plot/plot.hpp"

namespace qprof::cli {
namespace {

struct PlotArgs {
  std::vector<std::string> files;
  std::optional<std::string> output;
  std::optional<std::string> size, window, unit, panels;
  std::vector<std::string> labels;
  bool no_markers = false;
  plot::PlotOptions opts;
};

int usage(const std::string& what) {
  std::cerr << "qprof plot: " << what << "\nUsage: qprof plot FILE [FILE...] [-o OUT.png|.svg|.pdf|-] [OPTIONS] (see qprof plot --help)\n";
  return kUsageError;
}

int run_plot(PlotArgs& a, const Invocation& invocation) {
  std::vector<std::string> files = a.files;
  if (invocation.had_dashdash) files.insert(files.end(), invocation.after_dashdash.begin(), invocation.after_dashdash.end());
  if (files.empty()) return usage("no trace given");
  plot::PlotOptions& o = a.opts;

  const bool tty = ::isatty(STDOUT_FILENO) == 1;
  if (a.output) {
    o.output = *a.output;
  } else if (tty) {
    o.output = "-";
  } else {
    return usage("stdout is not a terminal: give -o FILE.png, .svg or .pdf, or -o - for a text chart");
  }
  if (!plot::format_for(o.output)) {
    return usage("cannot tell the format of '" + o.output + "' (-o): use a .png, .svg or .pdf file, or - for a text chart");
  }
  if (a.size) {
    const auto s = plot::parse_size_spec(*a.size);
    if (!s) return usage("--size " + *a.size + ": expected WIDTHxHEIGHT, such as 1600x900 (characters for a text chart)");
    o.width = s->first;
    o.height = s->second;
  }
  if (a.window) {
    const auto w = plot::parse_window(*a.window);
    if (!w) return usage("--window " + *a.window + ": expected T0,T1 in seconds from the start (T0 < T1; either may be left out)");
    o.from = w->first;
    o.to = w->second;
  }
  if (a.unit) {
    const auto u = parse_unit(*a.unit);
    if (!u || (*u != Unit::MiB && *u != Unit::GiB && *u != Unit::MB && *u != Unit::GB)) {
      return usage("--unit " + *a.unit + ": one of MiB, GiB, MB, GB");
    }
    o.unit = u;
  }
  if (a.panels) {
    const auto p = plot::parse_panels(*a.panels);
    if (!p) return usage("--panels " + *a.panels + ": a list of memory, gpu, cpu, io (such as memory,cpu)");
    o.panels = *p;
  }
  if (a.labels.size() > files.size()) {
    return usage(std::to_string(a.labels.size()) + " labels (--label) for " + std::to_string(files.size()) +
                 (files.size() == 1 ? " trace" : " traces"));
  }
  o.markers = !a.no_markers;

  std::vector<plot::Input> inputs;
  for (std::size_t i = 0; i < files.size(); ++i) inputs.push_back({files[i], i < a.labels.size() ? a.labels[i] : ""});
  try {
    plot::plot(inputs, o);
  } catch (const plot::PlotError& e) {
    std::cerr << "qprof plot: " << e.what() << '\n';
    return kUsageError;
  } catch (const dat::ParseError& e) {
    std::cerr << "qprof plot: " << e.what() << '\n';
    return kUsageError;
  }
  return 0;
}

}  // namespace

Command add_plot(CLI::App& app, const Invocation& invocation) {
  auto a = std::make_shared<PlotArgs>();
  CLI::App* cmd = app.add_subcommand("plot", "Draw memory over time of one trace or several (qprof's or mprof's .dat) with gnuplot");
  cmd->footer(
      "Usage: qprof plot FILE [FILE...] [-o OUT] [OPTIONS]\n"
      "Several files are overlaid, each from its own start (or one panel each with --facet).\n"
      "Without -o, a text chart when stdout is a terminal. Exit status 2 on bad options or input, or when gnuplot\n"
      "is missing or fails.");
  cmd->add_option("files", a->files, "Traces: .dat files written by qprof run or mprof run");
  cmd->add_option("-o,--output", a->output,
                  "Chart file, by extension: .png, .svg or .pdf; - draws a text chart on stdout (the default on a terminal)");
  cmd->add_option("--size", a->size, "WIDTHxHEIGHT in pixels (characters for a text chart); default 1280 wide");
  cmd->add_option("--title", a->opts.title, "Chart title (default: the command line of a single trace)");
  cmd->add_option("--unit", a->unit, "Memory unit: MiB, GiB, MB or GB (default: MiB, GiB from 10 GiB)");
  cmd->add_option("--window", a->window, "T0,T1: only this part of the run, in seconds from the start (\"T0,\" or \",T1\" leave a side open)");
  cmd->add_flag("--no-markers", a->no_markers, "No checkpoints, stages or exit annotations");
  cmd->add_option("--label", a->labels, "Name of a trace in the legend, once per file in order (default: the file name's stem)")
      ->allow_extra_args(false);
  cmd->add_flag("--children", a->opts.children, "Also one line per process of the tree (traces recorded with qprof run -M)");
  cmd->add_flag("--facet", a->opts.facet, "One panel per trace, sharing the axes, instead of overlaying them");
  cmd->add_option("--panels", a->panels,
                  "Stacked panels, top to bottom, from memory,gpu,cpu,io (default: memory, and gpu when recorded)");
  cmd->add_option("--style", a->opts.style, "A gnuplot file loaded after qprof's style (plot/qprof.gp), to change the look");
  cmd->add_option("--script", a->opts.script, "Also write the complete gnuplot script (data included) to this file");
  cmd->add_option("--gnuplot", a->opts.gnuplot, "The gnuplot program (default: gnuplot, found on PATH)");
  return {cmd, [a, &invocation]() -> int { return run_plot(*a, invocation); }};
}

}  // namespace qprof::cli
