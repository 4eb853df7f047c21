// SPDX-License-Identifier: Apache-2.0
#include "qprof/fit/mps_daemon.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "qprof/common/units.hpp"

extern char** environ;

namespace qprof::fit {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

constexpr std::size_t kMaxOutput = 64 << 10;

std::vector<std::string> environment_with(const std::vector<std::pair<std::string, std::string>>& env) {
  std::vector<std::string> out;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry(*e);
    bool replaced = false;
    for (const auto& [name, value] : env) replaced = replaced || entry.starts_with(name + "=");
    if (!replaced) out.emplace_back(entry);
  }
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

std::string read_output(int fd) {
  std::string out(kMaxOutput, '\0');
  const ssize_t n = ::pread(fd, out.data(), out.size(), 0);
  out.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// Whether `pid` is gone: no such process, or a zombie (the daemon's parent exited, and whoever
// adopted it has not reaped it yet).
bool process_gone(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return true;
  const auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
}

std::optional<pid_t> read_pid_file(const std::string& path) {
  std::ifstream in(path);
  long pid = 0;
  if (in >> pid && pid > 1) return static_cast<pid_t>(pid);
  return std::nullopt;
}

}  // namespace

bool mps_daemon_answers(const std::string& pipe_dir) {
  const std::string path = pipe_dir + "/control";
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode)) return false;
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return false;
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const bool answers = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  ::close(fd);
  return answers;
}

ToolRun run_tool(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env,
                 const std::string& input, double timeout_s) {
  ToolRun r;
  int in[2];
  if (argv.empty() || ::pipe2(in, O_CLOEXEC) != 0) return r;
  // The input is a command or two: it fits in the pipe, written before the tool starts.
  [[maybe_unused]] const ssize_t w = ::write(in[1], input.data(), input.size());
  ::close(in[1]);
  const int out = ::open(fs::temp_directory_path().c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  if (out >= 0) {
    posix_spawn_file_actions_adddup2(&actions, out, 1);
    posix_spawn_file_actions_adddup2(&actions, out, 2);
  }
  std::vector<std::string> args = argv, envs = environment_with(env);
  std::vector<char*> cargs, cenv;
  for (std::string& a : args) cargs.push_back(a.data());
  for (std::string& e : envs) cenv.push_back(e.data());
  cargs.push_back(nullptr);
  cenv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = ::posix_spawn(&pid, cargs[0], &actions, nullptr, cargs.data(), cenv.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(in[0]);
  if (rc != 0) {
    r.output = argv[0] + ": " + std::strerror(rc);
    if (out >= 0) ::close(out);
    return r;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      r.output = argv[0] + " did not end within " + human_seconds(timeout_s) + "; killed";
      if (out >= 0) ::close(out);
      return r;
    }
    std::this_thread::sleep_for(10ms);
  }
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  if (out >= 0) {
    r.output = read_output(out);
    ::close(out);
  }
  return r;
}

MpsDaemon::MpsDaemon(std::string control, std::string root)
    : control_(std::move(control)), root_(std::move(root)), pipe_dir_(root_ + "/pipe"), log_dir_(root_ + "/log") {}

Result<std::unique_ptr<MpsDaemon>> MpsDaemon::start(const std::string& control, const std::string& device_uuid) {
  std::error_code ec;
  std::string pattern = (fs::temp_directory_path(ec) / "qprof-mps.XXXXXX").string();
  if (ec || ::mkdtemp(pattern.data()) == nullptr)
    return Failure{"cannot make a directory for the MPS daemon in " + fs::temp_directory_path(ec).string() + ": " +
                   std::strerror(errno)};
  std::unique_ptr<MpsDaemon> d(new MpsDaemon(control, pattern));
  d->stopped_ = true;  // nothing to quit yet: the destructor only removes the directories
  if (::mkdir(d->pipe_dir_.c_str(), 0700) != 0 || ::mkdir(d->log_dir_.c_str(), 0700) != 0)
    return Failure{"cannot make " + d->pipe_dir_ + ": " + std::strerror(errno)};
  auto env = d->client_environment();
  env.emplace_back("CUDA_VISIBLE_DEVICES", device_uuid);  // the server sees this GPU only: the clients' device 0
  const ToolRun r = run_tool({control, "-d"}, env, "", 30);
  if (r.status != 0) {
    return Failure{"cannot start a CUDA MPS control daemon: " + control + " -d " +
                   (r.status < 0 ? std::string("failed") : "exited with status " + std::to_string(r.status)) +
                   (r.output.empty() ? "" : ": " + r.output)};
  }
  d->stopped_ = false;
  // -d returns once the daemon forked; its pid file follows within moments.
  for (int i = 0; i < 200 && !d->pid_; ++i) {
    d->pid_ = read_pid_file(d->pipe_dir_ + "/nvidia-cuda-mps-control.pid");
    if (!d->pid_) std::this_thread::sleep_for(10ms);
  }
  return d;
}

std::vector<std::pair<std::string, std::string>> MpsDaemon::client_environment() const {
  return {{"CUDA_MPS_PIPE_DIRECTORY", pipe_dir_}, {"CUDA_MPS_LOG_DIRECTORY", log_dir_}};
}

Result<void> MpsDaemon::stop() {
  std::string problem;
  if (!stopped_) {
    stopped_ = true;
    const ToolRun r = run_tool({control_}, client_environment(), "quit\n", 30);
    if (r.status != 0) problem = "echo quit | " + control_ + " failed" + (r.output.empty() ? "" : ": " + r.output);
    if (pid_) {
      bool gone = false;
      for (int i = 0; i < 1000 && !(gone = process_gone(*pid_)); ++i) std::this_thread::sleep_for(10ms);
      if (!gone) {
        ::kill(*pid_, SIGKILL);
        problem += (problem.empty() ? "" : "; ") + std::string("the daemon (PID ") + std::to_string(*pid_) +
                   ") did not quit within 10 s: killed";
      }
    }
  }
  std::error_code ec;
  if (!root_.empty()) fs::remove_all(root_, ec);
  root_.clear();
  if (!problem.empty()) return Failure{problem};
  return {};
}

MpsDaemon::~MpsDaemon() { [[maybe_unused]] const Result<void> r = stop(); }

}  // namespace qprof::fit
