// SPDX-License-Identifier: Apache-2.0
#include "e2e_util.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace qprof::test {
using trace::MemSample;
using trace::Trace;

std::string qprof_bin() { return QPROF_TEST_BIN; }
std::string workload(const std::string& name) { return std::string(QPROF_TEST_WORKLOADS) + "/" + name; }
std::string data_file(const std::string& relative) { return std::string(QPROF_TEST_DATA) + "/" + relative; }
std::string mprof_bin() { return QPROF_TEST_MPROF; }
std::string debian_python() { return QPROF_TEST_PYTHON; }

std::string temp_dir() {
  static std::string dir = [] {
    std::string tmpl = (std::filesystem::temp_directory_path() / "qprof-test-XXXXXX").string();
    if (!mkdtemp(tmpl.data())) throw std::runtime_error("mkdtemp failed");
    static std::string keep = tmpl;
    std::atexit([] { std::filesystem::remove_all(keep); });
    return tmpl;
  }();
  return dir;
}

std::string fresh_dir(const std::string& name) {
  const std::string dir = temp_dir() + "/" + name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string copy_for_other_users(const std::string& path) {
  namespace fs = std::filesystem;
  const std::string dir = temp_dir() + "/shared";
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::all);
  fs::permissions(temp_dir(), fs::perms::others_exec, fs::perm_options::add);
  const std::string copy = dir + "/" + fs::path(path).filename().string();
  fs::copy_file(path, copy, fs::copy_options::overwrite_existing);
  return copy;
}

Process::Process(const std::vector<std::string>& argv, const std::string& input) {
  int out[2], err[2], in[2];
  if (pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC) || pipe2(in, O_CLOEXEC)) throw std::runtime_error("pipe");
  pid_ = fork();
  if (pid_ == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    // Output as wide as a pipe's, 80 columns, whatever the shell that ran the tests exported
    // (a test that wants another width runs `env COLUMNS=N ...`).
    unsetenv("COLUMNS");
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execvp(args[0], args.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  close(in[0]);
  // Small inputs only: they fit in the pipe.
  if (!input.empty() && write(in[1], input.data(), input.size()) < 0) throw std::runtime_error("write");
  close(in[1]);
  out_fd_ = out[0];
  err_fd_ = err[0];
}

Process::~Process() {
  if (!waited_) {
    kill(pid_, SIGKILL);
    wait(5);
  }
}

Result Process::wait(int timeout_s) {
  if (waited_) return result_;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  pollfd fds[2] = {{out_fd_, POLLIN, 0}, {err_fd_, POLLIN, 0}};
  int open_fds = 2;
  char buf[65536];
  bool killed = false;
  int status = 0;
  bool exited = false;
  // Until the end of both pipes, or until the process exited and the pipes have nothing more
  // right now: a daemon it left behind may hold them open for long.
  while (open_fds > 0) {
    if (!killed && std::chrono::steady_clock::now() > deadline) {
      kill(pid_, SIGKILL);
      killed = true;
    }
    if (!exited) exited = waitpid(pid_, &status, WNOHANG) == pid_;
    const int ready = poll(fds, 2, exited ? 20 : 100);
    if (ready <= 0) {
      if (exited) break;
      continue;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? result_.out : result_.err).append(buf, static_cast<std::size_t>(n));
      } else {
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  close(out_fd_);
  close(err_fd_);
  if (!exited) waitpid(pid_, &status, 0);
  result_.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  waited_ = true;
  return result_;
}

Result run(const std::vector<std::string>& argv, const std::string& input, int timeout_s) {
  Process p(argv, input);
  return p.wait(timeout_s);
}

Result qprof(const std::vector<std::string>& args, const std::string& input, int timeout_s) {
  std::vector<std::string> argv{qprof_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, input, timeout_s);
}

Bytes max_mem(const Trace& t) {
  Bytes m = 0;
  for (const MemSample& s : t.mem) m = std::max(m, s.bytes);
  return m;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void write_file(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

bool sanitized() { return QPROF_TEST_SANITIZED != 0; }

std::string as_limit(const std::string& bytes) { return sanitized() ? "--as=unlimited" : "--as=" + bytes; }

std::string unwrapped(const std::string& summary) {
  std::string out;
  std::size_t from = 0;
  while (from < summary.size()) {
    std::size_t end = summary.find('\n', from);
    if (end == std::string::npos) end = summary.size();
    std::string line = summary.substr(from, end - from);
    const std::size_t text = line.find_first_not_of(' ');
    if (text >= 8 && text != std::string::npos && !out.empty()) {
      out.back() = ' ';  // the newline before a continuation
      line = line.substr(text);
    }
    out += line + "\n";
    from = end + 1;
  }
  return out;
}

// qprof fit's stderr with each wrapped line joined again: a continuation is indented 4 or more
// columns deeper than the line it continues.
std::vector<std::string> sentences(const std::string& err) {
  std::vector<std::string> out;
  std::istringstream in(err);
  const auto indent = [](const std::string& l) { return std::min(l.find_first_not_of(' '), l.size()); };
  for (std::string l; std::getline(in, l);) {
    if (!out.empty() && indent(l) < l.size() && indent(l) >= indent(out.back()) + 4) {
      out.back() += " " + l.substr(indent(l));
    } else {
      out.push_back(l);
    }
  }
  return out;
}

std::string joined(const std::string& err) {
  std::string out;
  for (const std::string& s : sentences(err)) out += s + "\n";
  return out;
}

}  // namespace qprof::test
