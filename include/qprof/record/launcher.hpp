// SPDX-License-Identifier: Apache-2.0
// Starts the profiled command (through Boost.Process: the child's set-up in its exec-setup hook,
// exec's failure reported back through a pipe) and turns wait statuses into qprof's exit status
// and words.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "qprof/common/failure.hpp"

namespace qprof::record {

struct LaunchRequest {
  std::vector<std::string> argv;
  int stderr_fd = -1;        // becomes the child's stderr when >= 0
  std::string cgroup_procs;  // the child joins this cgroup before exec when not empty
  // Signals whose disposition qprof changed (ignored, or caught): the child gets the defaults,
  // and an unblocked mask, as if qprof had not been there.
  std::vector<int> default_signals;
  // RLIMIT_NOFILE as qprof was started: qprof raises its own, the command keeps what it was given.
  std::optional<rlimit> files_limit;
  // A process group of its own (setpgid): then a signal sent to qprof's group does not reach the
  // command directly, and qprof's forwarding is the one delivery.
  bool own_process_group = false;
  // That group's ID when it is led by another process (record/group_leader.hpp), so that the
  // command is no group leader; 0: the command leads it.
  pid_t process_group = 0;
  // Work of qprof's own, done in the parent while the child execs: the parent waits for that
  // exec (a few hundred microseconds) to report 127 or 126, and this needs the time anyway. If
  // it throws, launch() kills and reaps the child, then throws that exception on.
  std::function<void()> while_exec;
  // Told what launch() did that the user did not type (a .py run with python3), for -v.
  std::function<void(const std::string&)> on_note;
};

// Returns the child's PID once it has exec'd, or why it could not start, as a Failure whose
// status is a shell's: 127 when the command is not found (in PATH, for a name without '/') or
// joining the cgroup failed with ENOENT, 126 when it cannot be executed, 2 for an empty argv. The
// message names the command ("sh: command not found"); the caller puts "qprof: " before it. The
// child is not reaped here but by qprof's loop (it is the subreaper). A command that names a .py
// file first runs it with python3 (else python) found on PATH.
Result<pid_t> launch(const LaunchRequest& request);

// mprof's habit (`mprof run script.py`): argv with the Python on PATH put before a first word
// ending in .py, and `note` saying so; argv unchanged (and `note` empty) otherwise. Empty when
// it is a script and no python3 or python is on PATH.
std::vector<std::string> python_script_argv(const std::vector<std::string>& argv, std::string& note);

// The command as a shell would need it typed: arguments quoted where needed, control characters
// and invalid UTF-8 written as $'\n' / $'\xHH', so that the result is one printable line.
std::string display_command(const std::vector<std::string>& argv);

struct ExitDescription {
  int exit_status = 0;  // the code, or 128 + signal
  int signal = 0;
  std::string message;  // empty for a normal exit; without "qprof: " (the speaker's)
};
// Who sent the signal that ended the command, where qprof knows: its --timeout (SIGTERM, then
// SIGKILL after the grace period) or the OOM killer.
enum class KillSource { unknown, qprof_timeout_term, qprof_timeout, oom_killer };
// Describes a wait status of `command_name`. A SIGKILL from an unknown source gets the OOM
// killer as a hint, never one that qprof sent itself.
ExitDescription describe_wait_status(int wait_status, const std::string& command_name,
                                     KillSource kill_source = KillSource::unknown);

// "SIGKILL", "SIGTERM", … (or "signal N").
std::string signal_name(int sig);

}  // namespace qprof::record
