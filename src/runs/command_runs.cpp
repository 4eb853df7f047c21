// SPDX-License-Identifier: Apache-2.0
#include "qprof/runs/command_runs.hpp"

#include <filesystem>

#include "qprof/common/output_file.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/record/launcher.hpp"
#include "qprof/record/signal_relay.hpp"
#include "qprof/runs/profiled_run.hpp"
#include "qprof/runs/stop_latch.hpp"

namespace qprof::runs {
using trace::Trace;

std::string command_trace_name(const std::string& prefix, int repeats, std::size_t command, int repeat,
                               std::string& taken) {
  std::string stem = prefix + "-" + std::to_string(command + 1);
  if (repeats > 1) stem += "-" + std::to_string(repeat + 1);
  std::string name = stem + ".dat";
  std::error_code ec;
  taken.clear();
  for (int n = 2; std::filesystem::exists(name, ec) || ec; ++n) {
    if (taken.empty()) taken = name;
    name = stem + ".run" + std::to_string(n) + ".dat";
  }
  return name;
}

namespace {

// "run 2/3, repeat 1/5: CMD -> PREFIX-2-1.dat"
std::string progress_line(const CommandRunsRequest& request, std::size_t k, int r, const std::string& output,
                          const std::string& taken) {
  std::string line = "run " + std::to_string(k + 1) + "/" + std::to_string(request.commands.size());
  if (request.repeat > 1) line += ", repeat " + std::to_string(r + 1) + "/" + std::to_string(request.repeat);
  line += ": " + request.commands[k] + " -> " + output;
  if (!taken.empty()) line += " (" + taken + " exists and is kept)";
  return line;
}

// One run of command k: its trace read back (null where a stop signal cut it short, `stop` set to
// the status to end with), or the Failure that ends the comparison.
Result<std::unique_ptr<Trace>> run_one(const CommandRunsRequest& request, std::size_t k, int r, CommandRuns& done,
                                       const Say& say) {
  RunRequest run{request.run, true, true, request.speaker};
  run.options.command = {"/bin/sh", "-c", request.commands[k]};
  std::string taken;
  // Never through a file or link already there.
  Result<std::string> created = create_fresh(command_trace_name(request.prefix, request.repeat, k, r, taken));
  if (!created) return Failure{terminal_text(created.failure().message)};
  run.options.output = *created;
  run.options.quiet = true;
  say(progress_line(request, k, r, run.options.output, taken));
  Result<ProfiledRun> ran = run_and_read(run);
  if (!ran) return Failure{"", ran.failure().status};
  const int status = ran->status;
  if (status != 0) {
    say("'" + request.commands[k] + "' exited with status " + std::to_string(status) + "; its trace is kept");
    if (done.failed == 0) done.failed = status;
  }
  if (const int sig = ran->stop_signal != 0 ? ran->stop_signal : record::received_stop_signal(); sig != 0) {
    say("interrupted by " + record::signal_name(sig) + " during this run: " + run.options.output +
        " is kept, left out of the table; no more runs");
    done.interrupted = is_stop_signal(status - 128) ? status : 128 + sig;
    return std::unique_ptr<Trace>();
  }
  if (ran->state == TraceState::incomplete || ran->state == TraceState::not_a_file) {
    // Never read back: the row would be built on a trace cut anywhere.
    return Failure{"the trace " + run.options.output + " is " +
                       (ran->state == TraceState::not_a_file ? "not a file" : "incomplete (" + ran->problem + ")") +
                       "; no comparison",
                   status != 0 ? status : kTraceIncompleteStatus};
  }
  if (ran->state == TraceState::unreadable) {
    return Failure{terminal_text(ran->problem), status != 0 ? status : kFailureStatus};
  }
  return std::make_unique<Trace>(std::move(ran->trace));
}

}  // namespace

Result<CommandRuns> run_commands(const CommandRunsRequest& request, const Say& say) {
  const StopLatch latch;  // a signal between two runs ends the batch, not qprof
  CommandRuns done;
  for (std::size_t k = 0; k < request.commands.size() && done.interrupted == 0; ++k) {
    CommandRuns::Command command{request.commands[k], {}};
    for (int r = 0; r < request.repeat && done.interrupted == 0; ++r) {
      if (const int sig = latch.signal(); sig != 0) {
        say("interrupted by " + record::signal_name(sig) + "; no more runs");
        done.interrupted = 128 + sig;
        break;
      }
      Result<std::unique_ptr<Trace>> trace = run_one(request, k, r, done, say);
      if (!trace) return trace.failure();
      if (*trace) command.runs.push_back(std::move(*trace));
    }
    if (!command.runs.empty()) done.commands.push_back(std::move(command));
  }
  return done;
}

}  // namespace qprof::runs
