// SPDX-License-Identifier: Apache-2.0
#include "qprof/runs/profiled_run.hpp"

#include <unistd.h>

#include <csignal>
#include <exception>

#include "qprof/common/stdout_to_stderr.hpp"
#include "qprof/runs/run_summary.hpp"

namespace qprof::runs {

bool is_stop_signal(int sig) { return sig == SIGINT || sig == SIGTERM || sig == SIGHUP || sig == SIGQUIT; }

Result<ProfiledRun> run_and_read(const RunRequest& request) {
  ProfiledRun run;
  {
    const StdoutToStderr keep_stdout_for_the_caller;
    record::RunHooks hooks;
    hooks.speaker = request.speaker;
    run.status = record::run_profiled(request.options, &run.report, hooks);
    say_summary(request.options, run.report, request.speaker);
  }
  if (!run.report.launched) {
    if (request.output_made_for_run) ::unlink(request.options.output.c_str());  // the empty file made for it
    return Failure{"the command could not be started", run.status};
  }
  const record::RunReport& report = run.report;
  if (is_stop_signal(report.exit.signal)) {
    run.stop_signal = report.exit.signal;
  } else if (is_stop_signal(run.status - 128)) {
    run.stop_signal = run.status - 128;
  }
  if (!report.trace_error.empty()) {
    run.state = TraceState::incomplete;
    run.problem = report.trace_error;
  } else if (!report.trace_readable_back) {
    run.state = TraceState::not_a_file;
  } else if (request.read_back) {
    Result<trace::Trace> read = record::read_back(report);
    if (read) {
      run.trace = std::move(*read);
      run.state = TraceState::read;
    } else {
      run.state = TraceState::unreadable;
      run.problem = read.failure().message;
    }
  }
  return run;
}

}  // namespace qprof::runs
