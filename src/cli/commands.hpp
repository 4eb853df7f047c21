// SPDX-License-Identifier: Apache-2.0
// The subcommands of the qprof executable: each registers its options on the CLI11 app and
// returns the action to run once parsing succeeded. No logic a test would want to reach.
// An action returns qprof's exit status, or the Failure that main prints (as "qprof SUB: …")
// and exits with: no action prints its own error and returns 2.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "qprof/common/failure.hpp"

namespace qprof::cli {

// Exit statuses of qprof's own (the command's status passes through `run`).
inline constexpr int kUsageError = kFailureStatus;
// A memory budget (--max-peak, --max-growth) was exceeded and the command itself succeeded.
inline constexpr int kBudgetExceeded = 3;
// A write of the trace failed (disk full…): the trace is incomplete; the command succeeded and
// no budget was exceeded (either of those wins).
inline constexpr int kTraceIncomplete = kTraceIncompleteStatus;

struct Command {
  CLI::App* app;
  std::function<Result<int>()> action;
};

// What followed the first "--" of qprof's arguments; main takes it off before CLI11 parses, so
// that nothing of a profiled command is ever read as qprof's own option.
struct Invocation {
  bool had_dashdash = false;
  std::vector<std::string> after_dashdash;

  // The command of `qprof run`/`peak`: the arguments left from its first positional on (CLI11's
  // prefix_command), and what followed "--". A "--" after CMD belongs to CMD and is put back.
  std::vector<std::string> command(const CLI::App& sub) const;
};

// add_run, add_attach…: one for each line of subcommands.def.
#define QPROF_SUBCOMMAND(name) Command add_##name(CLI::App& app, const Invocation& invocation);
#include "subcommands.def"
#undef QPROF_SUBCOMMAND

// What --version prints: version, build type, the GPU backends that work here.
std::string version_text();

}  // namespace qprof::cli
