// SPDX-License-Identifier: Apache-2.0
// Exit statuses, signals in both directions, the timeout.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <thread>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using trace::Trace;

namespace {

using namespace std::chrono_literals;

TEST(RunExit, StatusIsTheCommands) {
  for (int code : {0, 1, 7, 255}) {
    const std::string out = temp_dir() + "/exit.dat";
    const Result r = qprof({"run", "-q", "-o", out, "--", workload("exit_with"), std::to_string(code)});
    EXPECT_EQ(r.status, code);
    const Trace t = trace::read_trace(out);
    ASSERT_TRUE(t.exit);
    EXPECT_EQ(t.exit->status, code);
  }
}

TEST(RunExit, KilledBySignalGives128PlusNAndSaysSo) {
  const std::string out = temp_dir() + "/killed.dat";
  const Result r = qprof({"run", "-q", "-o", out, "--", workload("exit_with"), "-9"});
  EXPECT_EQ(r.status, 137);
  EXPECT_NE(joined(r.err).find("was killed by SIGKILL (signal 9); the OOM killer does this when memory runs out"),
            std::string::npos)
      << r.err;
  const Result segv = qprof({"run", "-q", "-o", out, "--", workload("exit_with"), "-11"});
  EXPECT_EQ(segv.status, 139);
  EXPECT_NE(joined(segv.err).find("SIGSEGV (signal 11)"), std::string::npos) << segv.err;
  const Trace t = trace::read_trace(out);
  ASSERT_TRUE(t.exit);
  EXPECT_EQ(t.exit->signal, 11);
}

TEST(RunExit, CommandNotFoundIs127AndNotExecutableIs126) {
  const Result missing = qprof({"run", "-o", temp_dir() + "/none.dat", "--", "qprof-no-such-command"});
  EXPECT_EQ(missing.status, 127);
  EXPECT_NE(joined(missing.err).find("qprof-no-such-command: command not found"), std::string::npos) << missing.err;
  const Result missing_path = qprof({"run", "-o", temp_dir() + "/none.dat", "--", "/nonexistent/tool"});
  EXPECT_EQ(missing_path.status, 127);
  const Result not_exec = qprof({"run", "-o", temp_dir() + "/none.dat", "--", data_file("proc/loadavg")});
  EXPECT_EQ(not_exec.status, 126);
  EXPECT_NE(joined(not_exec.err).find("Permission denied"), std::string::npos) << not_exec.err;
  EXPECT_FALSE(std::filesystem::exists(temp_dir() + "/none.dat")) << "no trace for a command that never ran";
}

// The command is found as a shell finds it: the first executable regular file of its name in
// PATH (a file without the execute bit, and a folder of that name, are passed over), and it
// gets argv[0] as typed.
TEST(RunExit, TheCommandIsFoundInPathAsAShellFindsIt) {
  const std::string dir = temp_dir() + "/path-search";
  std::filesystem::remove_all(dir);
  for (const char* d : {"/a", "/b/tool", "/c"}) std::filesystem::create_directories(dir + d);
  const auto script = [&](const std::string& path, const std::string& text, std::filesystem::perms perms) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    std::fputs(text.c_str(), f);
    std::fclose(f);
    std::filesystem::permissions(path, perms);
  };
  using std::filesystem::perms;
  script(dir + "/a/tool", "#!/bin/sh\necho wrong one\n", perms::owner_read | perms::owner_write);
  script(dir + "/c/tool", "#!/bin/sh\necho \"argv0=$0 args=$*\" >&2\nexit 3\n", perms::owner_all);
  const std::string out = dir + "/tool.dat";
  const Result r = run({"env", "PATH=" + dir + "/a:" + dir + "/b:" + dir + "/c:/usr/bin:/bin", qprof_bin(), "run", "-q",
                        "-o", out, "--", "tool", "x", "y z"});
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(joined(r.err).find("argv0=" + dir + "/c/tool args=x y z"), std::string::npos) << r.err;
  // argv[0] as typed: the shell reports $0 as the script's path (the kernel passes the found
  // path to the interpreter); a program sees its own argv[0].
  const Result argv0 =
      run({"env", "PATH=/usr/bin:/bin", qprof_bin(), "run", "-q", "-o", out, "--", "python3", "-c",
           "import sys; sys.stderr.write('argv0=%s\\n' % open('/proc/self/cmdline').read().split('\\0')[0])"});
  EXPECT_EQ(argv0.status, 0) << argv0.err;
  EXPECT_NE(joined(argv0.err).find("argv0=python3\n"), std::string::npos) << argv0.err;
  // Only the file without the execute bit: not found, as in a shell's PATH search.
  const Result none = run({"env", "PATH=" + dir + "/a", qprof_bin(), "run", "-q", "-o", out, "--", "tool"});
  EXPECT_EQ(none.status, 127) << none.err;
  EXPECT_NE(joined(none.err).find("qprof: tool: command not found"), std::string::npos) << none.err;
  std::filesystem::remove_all(dir);
}

TEST(RunExit, UsageErrorsAre2) {
  EXPECT_EQ(qprof({"run"}).status, 2);
  EXPECT_EQ(qprof({"run", "--interval", "0", "--", "true"}).status, 2);
  EXPECT_EQ(qprof({"run", "--interval", "abc", "--", "true"}).status, 2);
  EXPECT_EQ(qprof({"run", "--no-such-option", "--", "true"}).status, 2);
  EXPECT_EQ(qprof({"nosuchcommand"}).status, 2);
  EXPECT_EQ(qprof({"run", "-o", "/nonexistent-dir/x.dat", "--", "true"}).status, 2);
}

// qprof forwards SIGTERM/SIGINT/SIGHUP to the command and still finishes trace and summary.
class RunSignals : public ::testing::TestWithParam<int> {};

TEST_P(RunSignals, AreForwardedAndTheTraceIsFinished) {
  const int sig = GetParam();
  const std::string out = temp_dir() + "/forward" + std::to_string(sig) + ".dat";
  Process p({qprof_bin(), "run", "-o", out, "--", workload("on_signal"), "42"});
  // Wait until the workload is up (its marker is in the trace), then signal qprof itself.
  for (int i = 0; i < 500 && read_file(out).find("MARK ") == std::string::npos; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(kill(p.pid(), sig), 0);
  const Result r = p.wait();
  EXPECT_EQ(r.status, 42) << r.err;
  EXPECT_NE(joined(r.err).find("workload got signal " + std::to_string(sig)), std::string::npos) << r.err;
  EXPECT_NE(joined(r.err).find("qprof:   trace"), std::string::npos) << "the summary is printed";
  const Trace t = trace::read_trace(out);
  ASSERT_TRUE(t.exit);
  EXPECT_EQ(t.exit->status, 42);
  EXPECT_NEAR(mib(max_mem(t)), 20.0, 3.0);
}

INSTANTIATE_TEST_SUITE_P(Forwarded, RunSignals, ::testing::Values(SIGTERM, SIGINT, SIGHUP));

// Without a terminal the command gets a process group of its own, but does not lead it: setsid
// (which forks and exits 0 when its caller leads a group) runs the command itself, and the status
// is the command's. The group still gets what qprof is sent, and --timeout still says the truth.
TEST(RunExit, SetsidKeepsTheCommandsStatus) {
  const std::string out = temp_dir() + "/setsid.dat";
  EXPECT_EQ(qprof({"run", "-q", "-o", out, "--", "setsid", "false"}).status, 1);
  EXPECT_EQ(qprof({"run", "-q", "-o", out, "--", "setsid", "sh", "-c", "exit 7"}).status, 7);
  const Result timed = qprof({"run", "-o", out, "--timeout", "0.3", "--", "setsid", "sleep", "30"});
  EXPECT_EQ(timed.status, 128 + SIGTERM) << timed.err;
  EXPECT_EQ(joined(timed.err).find("exit status 0"), std::string::npos) << timed.err;
  // Not a group leader, yet in a group of its own (not qprof's).
  const Result ids = qprof({"run", "-q", "-o", out, "--", "sh", "-c", "ps -o pid=,pgid= -p $$"});
  std::istringstream in(ids.out);
  long pid = 0, pgid = 0;
  ASSERT_TRUE(static_cast<bool>(in >> pid >> pgid)) << ids.out << ids.err;
  EXPECT_NE(pid, pgid);
  EXPECT_NE(pgid, static_cast<long>(::getpgrp()));
}

TEST(RunExit, TimeoutTerminatesTheTree) {
  const std::string out = temp_dir() + "/timeout.dat";
  const auto t0 = std::chrono::steady_clock::now();
  const Result r = qprof({"run", "-o", out, "--timeout", "0.5", "--", "sh", "-c", "sleep 30 & sleep 30; wait"});
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status, 128 + SIGTERM);
  EXPECT_LT(elapsed, 10.0);
  EXPECT_NE(joined(r.err).find("timeout after 500 ms: sent SIGTERM to 3 process(es) of the tree"), std::string::npos)
      << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_TRUE(t.exit);
  EXPECT_TRUE(t.exit->timed_out);
}

TEST(RunExit, TimeoutEscalatesToSigkillAfterTheGracePeriod) {
  const std::string out = temp_dir() + "/timeout_kill.dat";
  const Result r =
      qprof({"run", "-o", out, "--timeout", "0.3", "--kill-after", "0.3", "--", workload("on_signal"), "5", "ignore"});
  EXPECT_EQ(r.status, 128 + SIGKILL);
  EXPECT_NE(joined(r.err).find("outlived the 300 ms grace period: sent SIGKILL"), std::string::npos) << r.err;
  EXPECT_NE(joined(r.err).find("killed by SIGKILL (signal 9); qprof sent it after --timeout"), std::string::npos)
      << r.err;
  EXPECT_EQ(joined(r.err).find("OOM killer"), std::string::npos) << "qprof sent the SIGKILL itself:\n" << r.err;
}

}  // namespace
}  // namespace qprof::test
