// SPDX-License-Identifier: Apache-2.0
// qprof attach PID: the options are run's (recording.hpp); what differs is checked here.
#include "recording.hpp"

namespace qprof::cli {
using record::CgroupMode;
using record::RunOptions;

const char* const kAttachFooter =
    "Usage: qprof attach [OPTIONS] PID   (or qprof run --attach PID [OPTIONS])\n"
    "Follows PID and its descendants (RSS, PSS, CPU, I/O, GPU: what qprof run records) until PID and its\n"
    "descendants are gone (--no-wait-daemons: PID's exit), --timeout, or Ctrl-C/SIGTERM; none of these\n"
    "signals PID. PID's stderr is not qprof's (no stderr markers); its exit status is in the summary when\n"
    "qprof could read it.\n"
    "Exit status: 0; 3 when --max-peak was exceeded; 4 when a write of the trace failed; 2 for usage\n"
    "errors, a PID that does not exist, one qprof may not read (another user's) and qprof's own.";

Result<void> attach_to(RunOptions& o, pid_t pid) {
  if (!o.command.empty()) return Failure{"--attach follows a running process: no command goes with it"};
  if (o.cgroup == CgroupMode::on) {
    return Failure{
        "--cgroup moves the tree into a cgroup of its own: not done to a running process "
        "(it would change the limits it runs under)"};
  }
  o.cgroup = CgroupMode::off;  // a running process keeps the cgroup it has
  o.attach = pid;
  o.command = {"attach"};  // a placeholder the session never runs: the process's own comes from /proc
  return {};
}

Command add_attach(CLI::App& app, const Invocation& invocation) { return add_recording(app, invocation, true); }

}  // namespace qprof::cli
