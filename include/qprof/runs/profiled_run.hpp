// SPDX-License-Identifier: Apache-2.0
// One run of a command under qprof as the subcommands that run it and then read its figures use
// it (peak -- CMD, compare --run, sweep): the run, its trace read back through the descriptor
// it was written with, and whether a signal that ends a batch of runs ended it.
#pragma once

#include <string>

#include "qprof/common/failure.hpp"
#include "qprof/common/speaker.hpp"
#include "qprof/record/session.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof::runs {

// The signals that end a batch of runs as they end qprof run: the terminal's keys, a job
// manager's, a closed terminal. Passed on to the run's command, they also stop the runs to come.
bool is_stop_signal(int sig);

// Whether the trace of a finished run could be read back, and if not, why.
enum class TraceState {
  read,        // complete, a file, read back
  not_read,    // complete, a file, and the caller did not ask for it
  incomplete,  // a write failed: never read back, the trace may be cut anywhere
  not_a_file,  // stdout, a pipe or a FIFO: gone once written
  unreadable,  // complete, but the reader refused it
};

struct ProfiledRun {
  int status = 0;  // qprof run's exit status for it: the command's (128+N for a signal)
  record::RunReport report;
  TraceState state = TraceState::not_read;
  trace::Trace trace;   // state == read: the trace read back
  std::string problem;  // incomplete: the failed write; unreadable: the reader's FILE:LINE: reason
  // SIGINT, SIGTERM, SIGHUP or SIGQUIT where one ended the command (or qprof passed it on and
  // the command exited with its status), else 0.
  int stop_signal = 0;
};

struct RunRequest {
  record::RunOptions options;
  bool read_back = true;  // read the trace back where it is a complete file
  // The output is a name the caller created for this run (record's create_fresh): removed where
  // the command never started, so that no empty trace is left.
  bool output_made_for_run = false;
  // What the run says (why it could not start, how the command was killed) and its summary
  // (unless options.quiet): the caller's, which prints them.
  Speaker speaker;
};

// Runs the command with its stdout on stderr (the caller's stdout stays for what it prints after),
// and reads its trace back. Fails only where the command never started (the session said why):
// the Failure's status is run_profiled's (127, 126, 2), its message "the command could not be
// started".
Result<ProfiledRun> run_and_read(const RunRequest& request);

}  // namespace qprof::runs
