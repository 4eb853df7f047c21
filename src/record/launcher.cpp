// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/launcher.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/process/child.hpp>
#include <boost/process/error.hpp>
#include <boost/process/exe.hpp>
#include <boost/process/extend.hpp>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <exception>

#include "qprof/common/child_process.hpp"
#include "qprof/common/find_program.hpp"
#include "qprof/common/safe_text.hpp"

namespace bp = boost::process;

namespace qprof::record {
namespace {

// The steps of the child's set-up that can fail, as child_process::Failure::step says them.
constexpr int kJoiningCgroup = child_process::kExec + 1;

// Runs in the forked child before exec: only async-signal-safe calls.
void prepare_child(const LaunchRequest& req) {
  child_process::default_signals(req.default_signals);
  if (req.stderr_fd >= 0 && req.stderr_fd != STDERR_FILENO) dup2(req.stderr_fd, STDERR_FILENO);
  if (req.files_limit) setrlimit(RLIMIT_NOFILE, &*req.files_limit);
  if (req.own_process_group && setpgid(0, req.process_group) != 0) setpgid(0, 0);
}

// Writes "0" (this process) to a cgroup.procs file; errno when it fails. Async-signal-safe.
bool join_cgroup(const char* procs) {
  const int fd = ::open(procs, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, "0", 1) == 1;
  const int e = errno;
  ::close(fd);
  errno = e;
  return ok;
}

bool is_plain_word(const std::string& s) {
  if (s.empty()) return false;
  for (unsigned char c : s) {
    if (!(std::isalnum(c) || std::strchr("_@%+=:,./-", c) != nullptr)) return false;
  }
  return true;
}

bool needs_ansi_c_quoting(const std::string& s) {
  for (unsigned char c : s) {
    if (c < 0x20 || c == 0x7F || c >= 0x80) return true;
  }
  return false;
}

std::string ansi_c_quote(const std::string& s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "$'";
  for (unsigned char c : s) {
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\\' || c == '\'')
      (out += '\\') += static_cast<char>(c);
    else if (c < 0x20 || c >= 0x7F)
      (out += "\\x") += std::string{kHex[c >> 4], kHex[c & 15]};
    else
      out += static_cast<char>(c);
  }
  return out + "'";
}

}  // namespace

std::vector<std::string> python_script_argv(const std::vector<std::string>& argv, std::string& note) {
  note.clear();
  if (argv.empty() || !argv.front().ends_with(".py")) return argv;
  // As mprof does, whether or not the script is executable: its #! line may name a Python that
  // is not the one the user's environment (a venv, conda) puts first on PATH.
  std::string python = find_program("python3");
  if (python.empty()) python = find_program("python");
  if (python.empty()) return {};
  std::vector<std::string> out{python};
  out.insert(out.end(), argv.begin(), argv.end());
  note = argv.front() + " is a Python script: run with " + python + " (the Python on PATH, as mprof run does)";
  return out;
}

Result<pid_t> launch(const LaunchRequest& request) {
  if (request.argv.empty()) return Failure{"no command given", 2};
  std::string note;
  LaunchRequest req = request;
  req.argv = python_script_argv(request.argv, note);
  if (req.argv.empty()) {
    return Failure{request.argv.front() + ": a Python script, and no python3 or python on PATH", 127};
  }
  if (!note.empty() && req.on_note) req.on_note(note);
  const std::string& name = req.argv.front();
  // Found as a shell finds it (Boost.Process's search_path); argv[0] stays what was typed, as a
  // shell passes it.
  const std::string exe = name.find('/') != std::string::npos ? name : find_program(name);
  // The name is the user's (or a script's) text: shown terminal-safe, never as raw escapes.
  if (exe.empty()) return Failure{terminal_text(name) + ": command not found", 127};
  // Everything the child needs is made before fork: after it, only async-signal-safe calls
  // (qprof may have other threads, whose locks the child would inherit held).
  std::vector<char*> argv;
  for (const std::string& a : req.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const char* cgroup = req.cgroup_procs.empty() ? nullptr : req.cgroup_procs.c_str();
  Result<std::unique_ptr<child_process::ExecReport>> opened = child_process::ExecReport::open();
  if (!opened) return Failure{opened.failure().message, 126};
  child_process::ExecReport* report = opened->get();
  bp::child child(
      bp::exe = exe, bp::ignore_error, *report,
      // Boost.Process passes the executable's path as argv[0]; the command gets it as typed.
      bp::extend::on_setup = [&](auto& exec) { exec.cmd_line = argv.data(); },
      bp::extend::on_exec_setup =
          [&](auto&) {
            prepare_child(req);
            if (cgroup != nullptr && !join_cgroup(cgroup)) report->fail(kJoiningCgroup, errno);
          });
  const pid_t pid = child.id();
  child.detach();                      // qprof reaps the whole tree itself (it is the subreaper)
  std::exception_ptr meanwhile_error;  // thrown on once the child is reaped
  if (req.while_exec && child.valid()) {
    try {
      req.while_exec();
    } catch (...) {
      meanwhile_error = std::current_exception();
    }
  }
  const std::optional<child_process::Failure> failure = report->wait();
  if (!failure) {
    if (!meanwhile_error) return pid;  // it runs the command
    // qprof cannot go on: the command is not left running unwatched.
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    std::rethrow_exception(meanwhile_error);
  }
  if (child.valid()) {  // it failed before exec, or exec did
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
  }
  if (meanwhile_error) std::rethrow_exception(meanwhile_error);
  const std::string step = failure->step == kJoiningCgroup ? "cannot join the cgroup " + req.cgroup_procs + ": " : "";
  return Failure{terminal_text(name) + ": " + step + std::strerror(failure->error),
                 failure->error == ENOENT ? 127 : 126};
}

std::string display_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& a : argv) {
    if (!out.empty()) out += ' ';
    if (is_plain_word(a)) {
      out += a;
    } else if (needs_ansi_c_quoting(a)) {
      out += ansi_c_quote(a);
    } else {
      out += '\'';
      for (char c : a) {
        if (c == '\'')
          out += "'\\''";
        else
          out += c;
      }
      out += '\'';
    }
  }
  return out;
}

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev ? std::string("SIG") + abbrev : "signal " + std::to_string(sig);
}

ExitDescription describe_wait_status(int wait_status, const std::string& command_name, KillSource kill_source) {
  ExitDescription d;
  if (WIFEXITED(wait_status)) {
    d.exit_status = WEXITSTATUS(wait_status);
    return d;
  }
  if (WIFSIGNALED(wait_status)) {
    d.signal = WTERMSIG(wait_status);
    d.exit_status = 128 + d.signal;
    d.message = terminal_text(command_name) + " was killed by " + signal_name(d.signal) + " (signal " +
                std::to_string(d.signal) + ")";
    if (d.signal == SIGTERM && kill_source == KillSource::qprof_timeout_term) d.message += "; qprof sent it: --timeout";
    if (d.signal == SIGKILL) {
      switch (kill_source) {
        case KillSource::qprof_timeout:
          d.message += "; qprof sent it after --timeout and the grace period";
          break;
        case KillSource::oom_killer:
          d.message += "; the OOM killer killed it (oom_kill in the tree's cgroup)";
          break;
        case KillSource::unknown:
        case KillSource::qprof_timeout_term:  // SIGTERM was qprof's; this came from elsewhere
          d.message += "; the OOM killer does this when memory runs out";
          break;
      }
    }
    if (WCOREDUMP(wait_status)) d.message += " (core dumped)";
  }
  return d;
}

}  // namespace qprof::record
