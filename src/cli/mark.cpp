// SPDX-License-Identifier: Apache-2.0
// qprof mark [--sync] [--strict] LABEL...: a marker from a shell script, through the marker
// channel the enclosing `qprof run` exported (the same header C programs include).
#include <memory>

#include "commands.hpp"
#include "qprof/common/text.hpp"
#include "qprof_mark.h"

namespace qprof::cli {
namespace {

struct MarkCli {
  std::vector<std::string> words;
  bool sync = false;
  bool strict = false;
};

Result<int> mark_action(const MarkCli& o, const Invocation& invocation) {
  std::string label;
  std::vector<std::string> words = o.words;
  if (invocation.had_dashdash)
    words.insert(words.end(), invocation.after_dashdash.begin(), invocation.after_dashdash.end());
  for (const std::string& w : words) label += (label.empty() ? "" : " ") + w;
  // qprof trims a label's blanks and takes no empty one: a blank label would be sent, dropped,
  // and (--sync) waited for in vain.
  if (trim_blanks(label).empty()) return Failure{"no label given\nUsage: qprof mark [--sync] [--strict] LABEL..."};
  const int result = o.sync ? qprof_mark_sync(label.c_str()) : qprof_mark(label.c_str());
  // Said even without --strict: a variable that points at anything else than the caller's own
  // FIFO is a planted or stale path, not the quiet "outside qprof" case.
  if (result == QPROF_MARK_REFUSED)
    return Failure{
        "QPROF_MARK_PATH is not your own FIFO in a directory only its owner may change; nothing was "
        "written to it",
        2};
  if (result == QPROF_MARK_OK || !o.strict) return 0;  // outside qprof: a no-op, silently
  // 1, not 2: --strict's "no qprof took it" is an answer, not a usage error (as grep's 1).
  return Failure{result == QPROF_MARK_ABSENT ? "not under qprof run (no QPROF_MARK_FD or QPROF_MARK_PATH to write to)"
                                             : "qprof did not take the checkpoint (no acknowledgement within 100 ms)",
                 1};
}

}  // namespace

Command add_mark(CLI::App& app, const Invocation& invocation) {
  auto opts = std::make_shared<MarkCli>();
  CLI::App* mark = app.add_subcommand(
      "mark", "Send a marker (a checkpoint; X Start ... X End is a stage) to the qprof run around this process");
  mark->add_option("label", opts->words,
                   "The marker's label (words are joined by one space; an empty or blank label is a usage error)");
  mark->add_flag(
      "--sync", opts->sync,
      "Return once qprof has sampled the checkpoint (at most 100 ms), so that it holds the memory of this moment");
  mark->add_flag("--strict", opts->strict,
                 "Exit 1 when no qprof took the marker (not under qprof run; with --sync: no acknowledgement in time). "
                 "Without it, outside qprof the command does nothing and exits 0");
  mark->footer(
      "Usage: qprof mark [--sync] [--strict] LABEL...\nWrites to QPROF_MARK_FD (or the FIFO QPROF_MARK_PATH) that "
      "`qprof run` exports; see \"Markers\" in docs/recording.md and qprof-run(1).");
  return {mark, [opts, &invocation] { return mark_action(*opts, invocation); }};
}

}  // namespace qprof::cli
