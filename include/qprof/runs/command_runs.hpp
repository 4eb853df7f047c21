// SPDX-License-Identifier: Apache-2.0
// qprof compare --run: each command run under qprof (--repeat times), its traces kept under names
// that never overwrite an earlier comparison's, and read back for the table.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "qprof/common/failure.hpp"
#include "qprof/common/speaker.hpp"
#include "qprof/record/options.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof::runs {

// Where the runs say how they go (one line, without "qprof SUB: "); the CLI prints it.
using Say = std::function<void(const std::string&)>;

struct CommandRunsRequest {
  record::RunOptions run;             // the sampling options; each command replaces its command and output
  std::vector<std::string> commands;  // each run with sh -c
  int repeat = 1;
  std::string prefix = "qprof_compare";  // PREFIX-K.dat, PREFIX-K-R.dat with repeat > 1
  Speaker speaker;                       // each run's words and summary (runs::RunRequest)
};

struct CommandRuns {
  struct Command {
    std::string command;
    std::vector<std::unique_ptr<trace::Trace>> runs;  // read back, in the order they ran
  };
  std::vector<Command> commands;  // those with a run done: a command not reached is left out
  int failed = 0;                 // the first non-zero exit status of a command
  // A stop signal ended the batch: the status to exit with (128+N), else 0. A run it cut short
  // keeps its trace on disk but is left out: its figures would mislead beside whole runs.
  int interrupted = 0;
};

// The trace of a --run: PREFIX-K.dat (PREFIX-K-R.dat with repeat > 1), or where a file has that
// name, the first of PREFIX-K.run2.dat, PREFIX-K.run3.dat… that none has: an earlier
// comparison's traces are never overwritten. `taken` gets the name passed over, to be said.
// `command` and `repeat` count from 0.
std::string command_trace_name(const std::string& prefix, int repeats, std::size_t command, int repeat,
                               std::string& taken);

// Runs every command in turn until a stop signal (runs::StopLatch) ends the batch. Fails where a
// trace cannot be created, a command cannot be started (its status, no message: the session said
// why), or a trace is incomplete or unreadable: a row built on a cut trace would mislead.
Result<CommandRuns> run_commands(const CommandRunsRequest& request, const Say& say);

}  // namespace qprof::runs
