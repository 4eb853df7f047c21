// SPDX-License-Identifier: Apache-2.0
// Programs run at a terminal for the end-to-end tests: through script(1), whose stdin is the
// keyboard (a ^C or ^Z written there is the key typed: the pty's line discipline signals the
// foreground group), and through tmux, a terminal emulator whose screen can be read back.
#pragma once

#include <sys/types.h>

#include <string>
#include <string_view>

namespace qprof::test {

// `shell_cmd` run by `script -qec` (through /bin/sh) on a pty of its own of cols x rows, TERM=xterm.
// What the terminal was sent is collected in a file; the session is killed after timeout_s.
class ScriptTerminal {
 public:
  explicit ScriptTerminal(const std::string& shell_cmd, int cols = 91, int rows = 37, int timeout_s = 60);
  ~ScriptTerminal();  // finish()
  ScriptTerminal(const ScriptTerminal&) = delete;
  ScriptTerminal& operator=(const ScriptTerminal&) = delete;

  void type(std::string_view keys);
  // Waits until `text` appears in the output at or after byte `from`; its offset, or npos.
  std::size_t wait_for(const std::string& text, double timeout_s = 20, std::size_t from = 0);
  std::string output() const;
  // Closes the keyboard and waits for script; its wait status.
  int finish();

 private:
  std::string log_;
  pid_t pid_ = -1;
  int keys_ = -1;
  int status_ = -1;
};

// Runs `shell_cmd` at such a terminal with the keyboard left alone; what the terminal received.
std::string at_terminal(const std::string& shell_cmd, int* status = nullptr);

// "'text'" for sh, quotes inside escaped.
std::string sh_quoted(const std::string& text);

// A tmux server of the test's own (its socket in the test's directory) with one window of
// cols x rows running `shell_cmd`. Skipped by the caller when tmux is not installed.
class TmuxTerminal {
 public:
  static bool available();
  TmuxTerminal(const std::string& shell_cmd, int cols, int rows);
  ~TmuxTerminal();  // kills the server
  TmuxTerminal(const TmuxTerminal&) = delete;
  TmuxTerminal& operator=(const TmuxTerminal&) = delete;

  // tmux send-keys: key names ("C-z", "Enter") or, with literal, text typed as it is.
  void send_keys(const std::string& keys, bool literal = false);
  // The screen as tmux shows it, one line per row (capture-pane -p); with history, the rows that
  // scrolled off above it first.
  std::string screen(bool history = false) const;
  // The last row of the screen.
  std::string last_row() const;
  // Waits until `text` is on the screen; whether it came.
  bool wait_for(const std::string& text, double timeout_s = 20) const;

 private:
  std::string tmux(const std::string& args) const;
  std::string socket_;
};

}  // namespace qprof::test
