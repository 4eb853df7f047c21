#include "qprof/record/launcher.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/process.hpp>
#include <boost/process/extend.hpp>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace bp = boost::process;

namespace qprof {
namespace {

// Runs in the forked child before exec: only async-signal-safe calls.
void prepare_child(const LaunchRequest& req) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  for (int sig : req.default_signals) signal(sig, SIG_DFL);
  if (req.stderr_fd >= 0 && req.stderr_fd != STDERR_FILENO) dup2(req.stderr_fd, STDERR_FILENO);
  if (req.files_limit) setrlimit(RLIMIT_NOFILE, &*req.files_limit);
  if (req.own_process_group) setpgid(0, 0);
}

bool join_cgroup(const std::string& procs) {
  const int fd = ::open(procs.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const bool ok = ::write(fd, "0", 1) == 1;
  ::close(fd);
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
    if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else if (c == '\\' || c == '\'') (out += '\\') += static_cast<char>(c);
    else if (c < 0x20 || c >= 0x7F) (out += "\\x") += std::string{kHex[c >> 4], kHex[c & 15]};
    else out += static_cast<char>(c);
  }
  return out + "'";
}

}  // namespace

std::variant<pid_t, LaunchFailure> launch(const LaunchRequest& req) {
  if (req.argv.empty()) return LaunchFailure{2, "qprof: no command given"};
  const std::string& name = req.argv.front();
  boost::filesystem::path exe;
  if (name.find('/') != std::string::npos) {
    exe = name;
  } else {
    exe = bp::search_path(name);
    if (exe.empty()) return LaunchFailure{127, "qprof: " + name + ": command not found"};
  }
  const std::vector<std::string> args(req.argv.begin() + 1, req.argv.end());
  std::error_code ec;
  bp::child child(
      bp::exe = exe.string(), bp::args = args,
      bp::extend::on_exec_setup =
          [&req](auto& exec) {
            prepare_child(req);
            if (!req.cgroup_procs.empty() && !join_cgroup(req.cgroup_procs)) {
              exec.set_error(std::error_code(errno, std::system_category()), "joining the cgroup failed");
              _exit(127);
            }
          },
      ec);
  if (ec) {
    const int status = ec.value() == ENOENT ? 127 : 126;
    return LaunchFailure{status, "qprof: " + name + ": " + ec.message()};
  }
  const pid_t pid = child.id();
  child.detach();  // qprof reaps the whole tree itself (it is the subreaper)
  return pid;
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
        if (c == '\'') out += "'\\''";
        else out += c;
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
    d.message = "qprof: " + command_name + " was killed by " + signal_name(d.signal) + " (signal " +
                std::to_string(d.signal) + ")";
    if (d.signal == SIGKILL) {
      switch (kill_source) {
        case KillSource::qprof_timeout: d.message += "; qprof sent it after --timeout and the grace period"; break;
        case KillSource::oom_killer: d.message += "; the OOM killer killed it (oom_kill in the tree's cgroup)"; break;
        case KillSource::unknown: d.message += "; the OOM killer does this when memory runs out"; break;
      }
    }
    if (WCOREDUMP(wait_status)) d.message += " (core dumped)";
  }
  return d;
}

}  // namespace qprof
