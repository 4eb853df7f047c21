// SPDX-License-Identifier: Apache-2.0
// qprof export TRACE… --format perfetto|chrome|csv|json [-o OUT]: traces for other tools.
#include <sys/stat.h>

#include <cstring>
#include <iostream>
#include <memory>

#include "qprof/common/fd_ostream.hpp"
#include "qprof/common/output_file.hpp"
#include "qprof/common/safe_text.hpp"
#include "commands.hpp"
#include "label_count.hpp"
#include "profiled.hpp"
#include "qprof/exports/export.hpp"
#include "qprof/trace/completeness.hpp"
#include "stderr_speaker.hpp"

namespace qprof::cli {
using trace::file_completeness;

namespace {

struct ExportCli {
  std::vector<std::string> files;
  std::string format = "perfetto";
  std::string output = "-";
  std::string unit = "MiB";
  std::vector<std::string> labels;
};

// A Failure of common's, as the terminal may show it.
Failure on_terminal(const Failure& f) { return Failure{terminal_text(f.message), f.status}; }

// The inputs, read through, into `output`: replaced only once the export is whole.
Result<void> write_to(const std::string& output, const std::vector<exports::Input>& inputs, exports::Options options) {
  Result<std::unique_ptr<OutputFile>> out = OutputFile::open(output);
  if (!out) return on_terminal(out.failure());
  options.in_place = !(*out)->replaces();
  FdOstream stream((*out)->fd());
  try {
    if (Result<void> written = exports::write_export(inputs, options, stream); !written)
      return on_terminal(written.failure());
  } catch (const std::exception& e) {
    return Failure{terminal_text(e.what())};
  }
  if (!stream.flush()) {
    const std::string where = output == "-" ? "stdout" : output;
    return Failure{terminal_text("cannot write " + where + ": " + std::strerror(stream.error()))};
  }
  if (Result<void> committed = (*out)->commit(); !committed) return on_terminal(committed.failure());
  return {};
}

Result<int> export_action(const ExportCli& o, const Invocation& invocation) {
  std::vector<std::string> files = o.files;
  if (invocation.had_dashdash)
    files.insert(files.end(), invocation.after_dashdash.begin(), invocation.after_dashdash.end());
  if (files.empty()) return Failure{"no trace given"};
  if (const auto labels = too_many_labels(o.labels.size(), files.size(), "trace")) return Failure{*labels};
  exports::Options options;
  options.format = *exports::parse_format(o.format);
  options.unit = *unit_of(o.unit);
  const Speaker say = stderr_speaker("export");
  options.warn = [say](const std::string& w) { say.line(terminal_text(w)); };
  std::vector<exports::Input> inputs;
  for (std::size_t i = 0; i < files.size(); ++i) inputs.push_back({files[i], i < o.labels.size() ? o.labels[i] : ""});

  // Every input is checked before the output is opened, and a replaced file is replaced only
  // once the export is whole (common/output_file.hpp): a failed export leaves what was there.
  if (Result<void> checked = refuse_output_over(o.output, files); !checked) return on_terminal(checked.failure());
  if (Result<void> readable = exports::check_inputs(inputs); !readable) return on_terminal(readable.failure());
  try {
    // Every regular file is read through before the first byte (a bad one fails with nothing
    // written), and one cut short is said; a FIFO or a pipe, by the export itself.
    for (const exports::Input& in : inputs) {
      struct stat st {};
      if (::stat(in.path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
      const trace::Completeness seen = file_completeness(in.path);
      // As every other reader of traces says it (exit 2), never an export of nothing.
      if (!seen.samples) return Failure{terminal_text(in.path) + ": no memory samples (MEM lines): the trace is empty"};
      for (const std::string& n : trace::reading_notices(in.path, seen)) say.line(n);
    }
  } catch (const std::exception& e) {
    return Failure{terminal_text(e.what())};
  }
  if (Result<void> written = write_to(o.output, inputs, options); !written) return written.failure();
  return 0;
}

}  // namespace

Command add_export(CLI::App& app, const Invocation& invocation) {
  auto opts = std::make_shared<ExportCli>();
  CLI::App* cmd =
      app.add_subcommand("export", "Convert traces for other tools: Perfetto UI / chrome://tracing, CSV, JSON");
  cmd->footer(
      "Usage: qprof export TRACE... [--format perfetto|chrome|csv|json] [-o OUT]\n"
      "perfetto and chrome: Chrome trace-event JSON, which Perfetto UI (ui.perfetto.dev) and\n"
      "chrome://tracing open; one process per trace, a counter track per series, stages and checkpoints.\n"
      "csv and json: one row per memory sample, one column per series, units in the header.\n"
      "Each trace is streamed, never held whole. Exit status 2 on bad options or a bad trace.");
  cmd->add_option("files", opts->files,
                  "Traces: .dat files written by qprof run or mprof run (several: one process each)");
  cmd->add_option("--format", opts->format, "perfetto (default) or chrome: trace-event JSON; csv; json")
      ->check(CLI::IsMember({"perfetto", "chrome", "csv", "json"}));
  cmd->add_option("-o,--output", opts->output, "Output file (default -: stdout)");
  cmd->add_option("--unit", opts->unit, "Unit of memory values and rates: B, KiB, MiB (default), GiB, KB, MB, GB")
      ->check(unit_check());
  cmd->add_option(
         "--label", opts->labels,
         "Name of a trace, one per use in file order, or a comma list (default: a rank's trace 'rank N (HOST)', "
         "else the file name less .dat)")
      ->allow_extra_args(false)
      ->delimiter(',');
  return {cmd, [opts, &invocation] { return export_action(*opts, invocation); }};
}

}  // namespace qprof::cli
