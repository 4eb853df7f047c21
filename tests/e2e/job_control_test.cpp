// SPDX-License-Identifier: Apache-2.0
// Job control with qprof at a terminal, as people use it: Ctrl-Z stops the job and qprof
// together (the shell reports the job stopped, nothing is sampled, the live line gives its row
// back), bg lets both go on without the live line, fg brings it back; the run ends as it would
// have, with the time stopped said. Through script(1) (the bytes the terminal was sent) and tmux
// (a terminal emulator's screen: what a person sees).
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <thread>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"
#include "terminal_util.hpp"

namespace qprof::test {
using trace::Trace;

namespace {

using namespace std::chrono_literals;

std::size_t count(const std::string& s, const std::string& what, std::size_t from = 0,
                  std::size_t to = std::string::npos) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what, from); at != std::string::npos && at < to; at = s.find(what, at + 1)) ++n;
  return n;
}

// A process's state letter (R, S, T, Z…) and parent, from /proc/PID/stat.
char state_of(pid_t pid, pid_t* parent = nullptr) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  std::getline(in, line);
  const std::size_t close = line.rfind(')');
  if (close == std::string::npos || close + 4 >= line.size()) return '?';
  if (parent) *parent = std::atoi(line.c_str() + close + 4);
  return line[close + 2];
}

// Whether `pid` reaches state `state` within 5 s.
bool becomes(pid_t pid, char state) {
  for (int i = 0; i < 250; ++i) {
    if (state_of(pid) == state) return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

// A child of `pid` in state `state`, from /proc/PID/task/PID/children.
bool has_child_in(pid_t pid, char state) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  for (pid_t child = 0; in >> child;)
    if (state_of(child) == state) return true;
  return false;
}

// Whether the job `pid` is stopped within 5 s: it is, or it waits in vfork ('D') on a child that
// is. dash starts each command with vfork; a Ctrl-Z that comes between the vfork and the exec
// stops the child, and the parent waits on it uninterruptibly, stopped in effect but never 'T'.
bool job_stops(pid_t pid) {
  for (int i = 0; i < 250; ++i) {
    const char state = state_of(pid);
    if (state == 'T' || (state == 'D' && has_child_in(pid, 'T'))) return true;
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

// An interactive bash with job control, no startup files, a prompt of its own.
const char* kShell = "env PS1='PROMPT$ ' bash --norc --noprofile -i";

// A job that says its PID, then ticks every 0.1 s on stderr.
std::string ticking_job(int ticks) {
  return "sh -c " + sh_quoted("echo \"job pid $$\" >&2; i=0; while [ $i -lt " + std::to_string(ticks) +
                              " ]; do echo \"tick $i\" >&2; i=$((i+1)); sleep 0.1; done");
}

pid_t job_pid(const std::string& said) {
  std::smatch m;
  return std::regex_search(said, m, std::regex("job pid (\\d+)")) ? std::stoi(m[1]) : -1;
}

TEST(JobControl, CtrlZStopsJobAndQprofThenBgAndFgGoOn) {
  const std::string dat = temp_dir() + "/jobctl.dat";
  ScriptTerminal term(std::string("exec ") + kShell, 91, 37, 90);
  ASSERT_NE(term.wait_for("PROMPT$ "), std::string::npos) << term.output();
  term.type("prlimit " + as_limit("1073741824") + " " + qprof_bin() + " run -o " + dat + " -- " + ticking_job(40) +
            "\n");
  ASSERT_NE(term.wait_for("tick 5"), std::string::npos) << term.output();
  ASSERT_NE(term.wait_for("\x1b[2Kqprof "), std::string::npos) << "a live line drawn: " << term.output();

  const std::size_t typed_z = term.output().size();
  term.type("\x1a");
  const std::size_t stopped = term.wait_for("Stopped", 20, typed_z);
  ASSERT_NE(stopped, std::string::npos) << term.output();
  std::string said = term.output();
  // The live line's row and the scrolling region were given back before the shell's report.
  EXPECT_NE(said.substr(typed_z, stopped - typed_z)
                .find("\x1b"
                      "7\x1b[r"),
            std::string::npos)
      << said.substr(typed_z);

  const pid_t job = job_pid(said);
  ASSERT_GT(job, 0) << said;
  pid_t qprof_pid = -1;
  state_of(job, &qprof_pid);
  // The key reached the whole group at once; each stops when it is next scheduled.
  EXPECT_TRUE(job_stops(job)) << "the job is stopped: " << state_of(job);
  EXPECT_TRUE(becomes(qprof_pid, 'T')) << "qprof is stopped with it";
  const std::size_t ticks_at_stop = count(said, "tick ");
  std::this_thread::sleep_for(1s);
  said = term.output();
  EXPECT_EQ(count(said, "tick "), ticks_at_stop) << "nothing ran while stopped";

  // bg: both go on in the background; the live line is not drawn over the shell's prompt.
  const std::size_t typed_bg = said.size();
  term.type("bg\n");
  ASSERT_NE(term.wait_for("tick " + std::to_string(ticks_at_stop + 3), 20, typed_bg), std::string::npos)
      << term.output();
  EXPECT_NE(state_of(job), 'T');
  const std::size_t typed_fg = term.output().size();
  EXPECT_EQ(count(term.output(), "\x1b[2Kqprof ", typed_bg), 0u) << "no live line in the background";

  // fg: in the foreground again, the live line comes back, and the run ends as it would have.
  term.type("fg\n");
  ASSERT_NE(term.wait_for("qprof:   trace", 30, typed_fg), std::string::npos) << term.output();
  said = term.output();
  EXPECT_GE(count(said, "\x1b[2Kqprof ", typed_fg), 1u) << "the live line is drawn again after fg";
  for (int i = 0; i < 40; ++i) EXPECT_EQ(count(said, "tick " + std::to_string(i) + "\r\n"), 1u) << i;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(said, m, std::regex("stopped for ([0-9.]+) s by Ctrl-Z"))) << said;
  EXPECT_GE(std::stod(m[1]), 0.9) << "the second held stopped, at least";

  term.type("echo rc=$?\nexit\n");
  term.finish();
  EXPECT_NE(term.output().find("rc=0"), std::string::npos) << term.output();

  // The trace: whole, with the stop a gap in the samples and not a run of missed samples.
  const Trace t = trace::read_trace(dat);
  ASSERT_GT(t.mem.size(), 10u);
  double gap = 0;
  for (std::size_t i = 1; i < t.mem.size(); ++i) gap = std::max(gap, t.mem[i].t - t.mem[i - 1].t);
  EXPECT_GE(gap, 0.9) << "no samples while stopped";
}

// In tmux, a terminal emulator: the live line is on the bottom row while the job runs and the
// job's lines scroll above it whole; Ctrl-Z leaves no live line on the screen under the prompt;
// after fg and the end, the screen holds every job line once, in order, and no live line.
TEST(JobControl, InTmuxTheScreenStaysWhole) {
  if (!TmuxTerminal::available()) GTEST_SKIP() << "tmux is not installed (scripts/install-deps --tests installs it)";
  const std::string dat = temp_dir() + "/tmux.dat";
  const std::string code =
      "import os, sys, time\n"
      "print('isatty', sys.stderr.isatty(), os.get_terminal_size(2), file=sys.stderr)\n"
      "for i in range(60):\n"
      "    print('line %02d ' % i + 'x' * 40, file=sys.stderr)\n"
      "    time.sleep(0.05)\n";
  TmuxTerminal tmux(kShell, 100, 30);
  ASSERT_TRUE(tmux.wait_for("PROMPT$")) << tmux.screen();
  tmux.send_keys("prlimit " + as_limit("1073741824") + " " + qprof_bin() + " run -o " + dat + " -- " + debian_python() +
                     " -c " + sh_quoted(code),
                 true);
  tmux.send_keys("Enter");
  ASSERT_TRUE(tmux.wait_for("line 10")) << tmux.screen();
  const std::string bottom = tmux.last_row();
  EXPECT_TRUE(std::regex_search(bottom, std::regex("^qprof [0-9.]+ s \\| (footprint [^|]+\\| RSS sum|RSS) ")))
      << "bottom row: '" << bottom << "'\n"
      << tmux.screen();

  tmux.send_keys("C-z");
  ASSERT_TRUE(tmux.wait_for("Stopped")) << tmux.screen();
  std::this_thread::sleep_for(200ms);
  const std::string at_stop = tmux.screen();
  EXPECT_EQ(at_stop.find("RSS "), std::string::npos) << "the live line was cleared:\n" << at_stop;

  tmux.send_keys("fg", true);
  tmux.send_keys("Enter");
  ASSERT_TRUE(tmux.wait_for("qprof:   trace", 30)) << tmux.screen();
  std::this_thread::sleep_for(200ms);
  const std::string all = tmux.screen(true);
  EXPECT_NE(all.find("isatty True os.terminal_size(columns=100, lines=30)"), std::string::npos) << all;
  std::size_t at = 0;
  for (int i = 0; i < 60; ++i) {
    char want[64];
    std::snprintf(want, sizeof want, "line %02d %s", i, std::string(40, 'x').c_str());
    const std::size_t found = all.find(std::string(want) + "\n", at);
    ASSERT_NE(found, std::string::npos) << "'" << want << "' whole, after the one before:\n" << all;
    EXPECT_EQ(count(all, want), 1u) << want;
    at = found;
  }
  EXPECT_TRUE(std::regex_search(all, std::regex("stopped for [0-9.]+ m?s by Ctrl-Z"))) << all;
  EXPECT_EQ(tmux.screen().find("RSS sum "), std::string::npos) << "no live line left after the end:\n" << tmux.screen();
}

}  // namespace
}  // namespace qprof::test
