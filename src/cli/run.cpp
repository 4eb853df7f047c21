#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "commands.hpp"
#include "profiled.hpp"
#include "qprof/trace/format.hpp"
#include "qprof/report/quark_yaml.hpp"
#include "qprof/record/session.hpp"

namespace qprof::cli {
namespace {

struct RunCli {
  RunOptions run;
  std::string yaml;  // --yaml FILE
  bool yaml_stream = false;
  std::string max_peak;
  std::string metric = "rss";
};

// Prefixes every line, so that qprof's lines stand out among the command's own on stderr.
std::string prefixed(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) out += line.empty() ? prefix.substr(0, prefix.size() - 1) + "\n" : prefix + line + "\n";
  return out;
}

// After the run: the stage table, the YAML report and the budget, all from the trace read back.
int after_run(const RunCli& o, const RunReport& report, int status) {
  if (o.run.quiet && o.yaml.empty() && o.max_peak.empty()) return status;  // nothing to add
  const bool cmd_failed = status != 0;
  const auto fail = [&](const std::string& why) {
    std::cerr << "qprof: " << why << '\n';
    return cmd_failed ? status : kUsageError;
  };
  Trace trace;
  try {
    trace = dat::read_trace(report.trace_path);
  } catch (const std::exception& e) {
    if (o.yaml.empty() && o.max_peak.empty()) return status;  // nothing more was asked
    return fail(std::string("cannot read the trace back: ") + e.what());
  }
  const Metric metric = metric_of(o.metric);
  const bool has = has_metric(trace, metric);

  if (!o.run.quiet && !trace.stages.empty()) {
    const Metric table_metric = has && metric_info(metric).windowed ? metric : Metric::rss;
    report::Document doc;
    doc.tables.push_back(report::stage_table(trace, table_metric));
    std::cerr << prefixed(report::render(doc, report::Format::text), "qprof: ");
  }
  int result = status;
  if (!o.yaml.empty()) {
    try {
      report::write_file_atomically(o.yaml, report::quark_yaml(trace));
    } catch (const std::exception& e) {
      result = fail(std::string("--yaml: ") + e.what());
    }
  }
  if (!o.max_peak.empty()) {
    if (!has) return fail("--max-peak: " + report::missing_metric(trace, metric));
    const auto check = check_budget(trace, metric, *parse_size(o.max_peak));
    if (check->exceeded()) {
      std::cerr << "qprof: memory budget exceeded: " << report::budget_message(trace, *check) << '\n';
      if (result == 0) result = kBudgetExceeded;
    } else if (!o.run.quiet) {
      std::cerr << "qprof: " << report::budget_message(trace, *check) << '\n';
    }
  }
  return result;
}

}  // namespace

Command add_run(CLI::App& app, const Invocation& invocation) {
  auto opts = std::make_shared<RunCli>();
  CLI::App* run = app.add_subcommand("run", "Run a command and record the memory of its whole process tree");
  run->footer(
      "Usage: qprof run [OPTIONS] [--] CMD [ARGS...]\n"
      "qprof exits with CMD's status (128+N if a signal killed it; 127: not found; 126: not executable);\n"
      "when CMD succeeded but its peak exceeded --max-peak: 3. Usage errors: 2.");
  run->prefix_command();  // everything from CMD on belongs to CMD, options included
  run->allow_extras();
  run->add_option("-o,--output", opts->run.output, "Trace file (default: qprof_YYYYMMDDhhmmss.dat)");
  add_sampling_options(*run, opts->run);
  run->add_flag("-M,--multiprocess", opts->run.multiprocess, "Also record each process of the tree (CHLD lines, as mprof -M)");
  run->add_flag("-q,--quiet", opts->run.quiet, "No summary and no stage table at the end");
  CLI::Option* yaml = run->add_option("--yaml", opts->yaml, "Also write a YAML report in the layout of Quark's quark_profile.yaml");
  run->add_flag("--yaml-stream", opts->yaml_stream, "Rewrite the --yaml file at every checkpoint while the command runs")
      ->needs(yaml);
  run->add_option("--max-peak", opts->max_peak,
                  "Memory budget: exit with status 3 when the peak exceeds SIZE (4GiB, 512MB, bytes) and CMD succeeded")
      ->check(size_check());
  run->add_option("--metric", opts->metric,
                  "rss (default, as mprof); pss, uss, all: also record the tree's PSS and USS. The metric of the "
                  "stage table and of --max-peak (all: rss), any of " + metric_names())
      ->check(run_metric_check());
  // mprof's own spellings, accepted so that scripts can switch: qprof always follows children
  // and always passes the exit code on.
  run->add_flag("-C,--include-children")->description("Accepted for mprof compatibility (qprof always includes children)");
  run->add_flag("-E,--exit-code")->description("Accepted for mprof compatibility (qprof always returns CMD's status)");

  CLI::App* self = run;
  return {run, [opts, self, &invocation]() -> int {
            RunCli& o = *opts;
            o.run.command = invocation.command(*self);
            if (o.run.command.empty()) {
              std::cerr << "qprof run: no command given\nUsage: qprof run [OPTIONS] [--] CMD [ARGS...]\n";
              return kUsageError;
            }
            // prefix_command() stops at the first word it does not know, an unknown option too.
            const std::vector<std::string> before_dashdash = self->remaining();
            if (!before_dashdash.empty() && before_dashdash.front().size() > 1 && before_dashdash.front()[0] == '-') {
              std::cerr << "qprof run: unknown option " << before_dashdash.front()
                        << " (see qprof run --help; a command starting with '-' goes after --)\n";
              return kUsageError;
            }
            if (!sampling_options_ok(o.run, "run")) return kUsageError;
            record_metric(o.run, o.metric);
            if (o.run.output.empty()) o.run.output = default_trace_name();
            // A bad --yaml must fail before the command runs, as a bad -o does.
            if (!o.yaml.empty()) {
              try {
                report::check_writable(o.yaml);
              } catch (const std::exception& e) {
                std::cerr << "qprof run: --yaml: " << e.what() << '\n';
                return kUsageError;
              }
            }
            std::unique_ptr<report::QuarkYamlStream> stream;
            RunHooks hooks;
            if (o.yaml_stream) {
              stream = std::make_unique<report::QuarkYamlStream>(o.run.output, o.yaml);
              hooks.on_checkpoint = [s = stream.get()](const Marker&) { s->checkpoint(); };
            }
            RunReport report;
            const int status = run_profiled(o.run, &report, hooks);
            if (stream) {
              stream->finish();
              for (const std::string& e : stream->errors()) std::cerr << "qprof: --yaml-stream: " << e << '\n';
            }
            if (!report.launched) return status;
            return after_run(o, report, status);
          }};
}

}  // namespace qprof::cli
