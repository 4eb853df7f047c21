// SPDX-License-Identifier: Apache-2.0
#include "terminal_util.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>
#include <vector>

#include "e2e_util.hpp"

namespace qprof::test {
namespace {

std::string unique_name(const std::string& stem) {
  static std::atomic<int> n{0};
  return temp_dir() + "/" + stem + "-" + std::to_string(getpid()) + "-" + std::to_string(n++);
}

void pause_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace

std::string sh_quoted(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

ScriptTerminal::ScriptTerminal(const std::string& shell_cmd, int cols, int rows, int timeout_s)
    : log_(unique_name("terminal") + ".log") {
  int in[2];
  if (pipe(in) != 0) return;
  pid_ = fork();
  if (pid_ == 0) {
    dup2(in[0], 0);
    close(in[0]);
    close(in[1]);
    const int fd = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 1);
    dup2(fd, 2);
    // script runs the command through $SHELL: /bin/sh, whichever shell the caller has.
    setenv("SHELL", "/bin/sh", 1);
    setenv("TERM", "xterm", 1);
    const std::string cmd = "stty cols " + std::to_string(cols) + " rows " + std::to_string(rows) + "; " + shell_cmd;
    const std::string limit = std::to_string(timeout_s);
    execlp("timeout", "timeout", "-s", "KILL", limit.c_str(), "script", "-qec", cmd.c_str(), "/dev/null", nullptr);
    _exit(127);
  }
  close(in[0]);
  keys_ = in[1];
}

ScriptTerminal::~ScriptTerminal() { finish(); }

void ScriptTerminal::type(std::string_view keys) {
  while (!keys.empty() && keys_ >= 0) {
    const ssize_t w = write(keys_, keys.data(), keys.size());
    if (w <= 0) return;
    keys.remove_prefix(static_cast<std::size_t>(w));
  }
}

std::size_t ScriptTerminal::wait_for(const std::string& text, double timeout_s, std::size_t from) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (true) {
    const std::string out = output();
    if (out.size() > from) {
      if (const std::size_t at = out.find(text, from); at != std::string::npos) return at;
    }
    if (std::chrono::steady_clock::now() >= end) return std::string::npos;
    pause_ms(20);
  }
}

std::string ScriptTerminal::output() const { return read_file(log_); }

int ScriptTerminal::finish() {
  if (pid_ > 0) {
    if (keys_ >= 0) close(keys_);
    keys_ = -1;
    waitpid(pid_, &status_, 0);
    pid_ = -1;
  }
  return status_;
}

std::string at_terminal(const std::string& shell_cmd, int* status) {
  ScriptTerminal t(shell_cmd);
  const int st = t.finish();
  if (status) *status = st;
  return t.output();
}

bool TmuxTerminal::available() { return run({"sh", "-c", "command -v tmux"}).status == 0; }

TmuxTerminal::TmuxTerminal(const std::string& shell_cmd, int cols, int rows) : socket_(unique_name("tmux") + ".sock") {
  const std::string conf = socket_ + ".conf";
  // No status bar: every row is the program's. No server-wide state of the user's is read.
  std::ofstream(conf) << "set -g status off\nset -g history-limit 10000\n";
  run({"tmux", "-S", socket_, "-f", conf, "new-session", "-d", "-x", std::to_string(cols), "-y", std::to_string(rows),
       shell_cmd});
}

TmuxTerminal::~TmuxTerminal() { run({"tmux", "-S", socket_, "kill-server"}); }

std::string TmuxTerminal::tmux(const std::string& args) const {
  return run({"sh", "-c", "tmux -S " + sh_quoted(socket_) + " " + args}).out;
}

void TmuxTerminal::send_keys(const std::string& keys, bool literal) {
  // "--" ends tmux's own options, so that typed text may start with '-'.
  if (literal)
    run({"tmux", "-S", socket_, "send-keys", "-t", "0", "-l", "--", keys});
  else
    run({"tmux", "-S", socket_, "send-keys", "-t", "0", "--", keys});
}

std::string TmuxTerminal::screen(bool history) const {
  return tmux(history ? "capture-pane -p -S - -t 0" : "capture-pane -p -t 0");
}

std::string TmuxTerminal::last_row() const {
  std::string s = screen();
  while (!s.empty() && s.back() == '\n') s.pop_back();
  const std::size_t nl = s.rfind('\n');
  // capture-pane leaves trailing empty rows out: the last row is the last line only when the
  // screen has all its rows.
  const std::string rows = tmux("display -p -t 0 '#{pane_height}'");
  std::size_t lines = 1;
  for (char c : s) lines += c == '\n';
  if (std::to_string(lines) + "\n" != rows) return "";
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

bool TmuxTerminal::wait_for(const std::string& text, double timeout_s) const {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  while (std::chrono::steady_clock::now() < end) {
    if (screen().find(text) != std::string::npos) return true;
    pause_ms(50);
  }
  return false;
}

}  // namespace qprof::test
