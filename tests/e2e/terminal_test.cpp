// SPDX-License-Identifier: Apache-2.0
// qprof at a terminal, through script(1): the job's stderr is a pty of qprof's (isatty, the
// window size and its changes, bytes passed unchanged), and the live status line (drawn on the
// last row, at most 4 times a second, never inside the job's output; absent with --no-live, -q
// and when stderr is not a terminal).
#include <gtest/gtest.h>

#include <regex>

#include "e2e_util.hpp"
#include "terminal_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using trace::Trace;

namespace {

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

std::string qprof_cmd(const std::string& args) {
  return "exec prlimit " + as_limit("1073741824") + " " + qprof_bin() + " " + args;
}

std::string python(const std::string& code) { return debian_python() + " -c " + sh_quoted(code); }

// The live line's own sequences taken out: its draws, the scrolling region it sets and resets.
std::string without_live_line(const std::string& s) {
  static const std::regex draw(
      "\x1b"
      "7\x1b\\[\\d+;1H\r\x1b\\[2K[^\x1b]*\x1b"
      "8");
  static const std::regex setup(
      "\x1b"
      "D\x1b"
      "M\x1b"
      "7\x1b\\[1;\\d+r\x1b"
      "8");
  static const std::regex reset(
      "\x1b"
      "7\x1b\\[r\x1b\\[\\d+;1H\x1b\\[2K\x1b"
      "8");
  return std::regex_replace(std::regex_replace(std::regex_replace(s, draw, ""), setup, ""), reset, "");
}

std::size_t count(const std::string& s, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

TEST(Terminal, JobStderrIsATerminal) {
  const std::string dat = temp_dir() + "/tty.dat";
  std::string said = at_terminal(
      qprof_cmd("run -q -o " + dat + " -- " + python("import sys; print(sys.stderr.isatty(), file=sys.stderr)")));
  EXPECT_TRUE(contains(said, "True\r\n")) << said;
  EXPECT_FALSE(contains(said, "False")) << said;
  said = at_terminal(
      qprof_cmd("run -q -o " + dat + " -- sh -c 'if [ -t 2 ]; then echo tty2 >&2; else echo notty2 >&2; fi'"));
  EXPECT_TRUE(contains(said, "tty2\r\n")) << said;
  EXPECT_FALSE(contains(said, "notty2")) << said;
}

TEST(Terminal, WindowSizeFollowsTheTerminal) {
  const std::string dat = temp_dir() + "/size.dat";
  // The job reads its stderr's size, resizes the real terminal (its controlling one, /dev/tty:
  // the kernel sends SIGWINCH to the foreground group, qprof included), then waits for its
  // stderr to follow.
  const std::string code =
      "import fcntl, os, struct, sys, termios, time\n"
      "print('before', os.get_terminal_size(2), file=sys.stderr)\n"
      "with open('/dev/tty', 'wb') as t: fcntl.ioctl(t, termios.TIOCSWINSZ, struct.pack('HHHH', 40, 100, 0, 0))\n"
      "for i in range(500):\n"
      "    if os.get_terminal_size(2).columns == 100: break\n"
      "    time.sleep(0.01)\n"
      "print('after', os.get_terminal_size(2), file=sys.stderr)\n";
  const std::string said = at_terminal(qprof_cmd("run -q -o " + dat + " -- " + python(code)));
  EXPECT_TRUE(contains(said, "before os.terminal_size(columns=91, lines=37)")) << said;
  EXPECT_TRUE(contains(said, "after os.terminal_size(columns=100, lines=40)")) << said;
}

TEST(Terminal, BytesPassUnchanged) {
  const std::string dat = temp_dir() + "/bytes.dat";
  // A NUL, invalid UTF-8, a carriage return, and a last line without a newline.
  const std::string job = "printf 'a\\000b\\377\\376 \\r x\\nlast' >&2";
  const std::string bare = at_terminal("exec sh -c " + sh_quoted(job));
  const std::string profiled = at_terminal(qprof_cmd("run -q --no-live -o " + dat + " -- sh -c " + sh_quoted(job)));
  ASSERT_TRUE(contains(bare, std::string("a\0b\xff\xfe \r x\r\nlast", 15))) << bare;
  EXPECT_EQ(profiled, bare);
}

TEST(Terminal, LiveLineRedrawsAtMostFourTimesASecond) {
  const std::string dat = temp_dir() + "/live.dat";
  const std::string job =
      "i=0; while [ $i -lt 15 ]; do echo \"job line $i\" >&2; echo \"out $i\"; i=$((i+1)); sleep 0.1; done";
  const std::string said = at_terminal(qprof_cmd("run -o " + dat + " -- sh -c " + sh_quoted(job)));
  const Trace t = trace::read_trace(dat);
  const double duration = t.mem.back().t - t.mem.front().t;
  const std::size_t draws = count(said,
                                  "\x1b"
                                  "7\x1b[37;1H\r\x1b[2Kqprof ");
  EXPECT_GE(draws, 3u) << said;
  EXPECT_LE(static_cast<double>(draws), 4.0 * duration + 2.0) << draws << " draws in " << duration << " s";
  // Truncated to the width: no draw is longer than 90 columns.
  static const std::regex text(
      "\x1b\\[2K(qprof [^\x1b]*)\x1b"
      "8");
  for (std::sregex_iterator it(said.begin(), said.end(), text), end; it != end; ++it) {
    EXPECT_LE((*it)[1].length(), 90u) << (*it)[1];
  }
  // The job's lines, stdout and stderr, are whole once the live line's sequences are taken out.
  const std::string clean = without_live_line(said);
  EXPECT_EQ(clean.find('\x1b'), std::string::npos) << clean;
  for (int i = 0; i < 15; ++i) {
    EXPECT_TRUE(contains(clean, "job line " + std::to_string(i) + "\r\n")) << clean;
    EXPECT_TRUE(contains(clean, "out " + std::to_string(i) + "\r\n")) << clean;
  }
  EXPECT_TRUE(contains(clean, "qprof:   Σ RSS")) << clean;
}

// qprof's own warning during the run (here --timeout's) is shown once, above the live line, as
// a line of its own, never inside a draw.
TEST(Terminal, WarningsGoAboveTheLiveLineOnce) {
  const std::string dat = temp_dir() + "/warn.dat";
  const std::string said = at_terminal(qprof_cmd("run --timeout 0.6 -o " + dat + " -- sleep 30"));
  EXPECT_EQ(count(said, "qprof: timeout after"), 1u) << said;
  const std::string clean = without_live_line(said);
  EXPECT_TRUE(contains(clean, "qprof: timeout after 600 ms: sent SIGTERM to 1 process(es) of the tree\r\n")) << clean;
  EXPECT_EQ(clean.find('\x1b'), std::string::npos) << clean;
}

TEST(Terminal, NoLiveLineWhenAskedOrNotATerminal) {
  const std::string dat = temp_dir() + "/nolive.dat";
  const std::string job = "sleep 0.7; echo done >&2";
  EXPECT_FALSE(contains(at_terminal(qprof_cmd("run --no-live -o " + dat + " -- sh -c " + sh_quoted(job))), "\x1b"));
  EXPECT_FALSE(contains(at_terminal(qprof_cmd("run -q -o " + dat + " -- sh -c " + sh_quoted(job))), "\x1b"));
  const Result r = qprof({"run", "-o", dat, "--", "sh", "-c", job});
  EXPECT_EQ(r.status, 0);
  EXPECT_FALSE(contains(r.err, "\x1b")) << r.err;
}

}  // namespace
}  // namespace qprof::test
