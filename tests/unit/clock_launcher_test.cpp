// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <variant>

#include "qprof/common/clock.hpp"
#include "qprof/common/find_program.hpp"
#include "qprof/record/launcher.hpp"
#include "temp_files.hpp"

namespace qprof {
using record::describe_wait_status;
using record::display_command;
using record::ExitDescription;
using record::KillSource;
using record::launch;
using record::LaunchRequest;
namespace {

TEST(NextDeadline, StaysOnTheGridAndCountsMisses) {
  std::uint64_t missed = 0;
  EXPECT_EQ(next_deadline(100, 10, 105, missed), 110);
  EXPECT_EQ(missed, 0u);
  EXPECT_EQ(next_deadline(100, 10, 110, missed), 120);  // exactly on the next: it is past
  EXPECT_EQ(missed, 1u);
  EXPECT_EQ(next_deadline(100, 10, 147, missed), 150);
  EXPECT_EQ(missed, 5u);
}

TEST(WallAnchor, UnixTimeFollowsTheMonotonicClock) {
  WallAnchor a;
  EXPECT_NEAR(a.unix_at(a.mono0() + 1500000000) - a.unix_at(a.mono0()), 1.5, 1e-6);
  EXPECT_GT(a.unix_at(a.mono0()), 1.6e9);
}

TEST(DisplayCommand, QuotesOnlyWhatNeedsIt) {
  EXPECT_EQ(display_command({"python3", "train.py", "--lr=0.1"}), "python3 train.py --lr=0.1");
  EXPECT_EQ(display_command({"sh", "-c", "echo 'hi' there"}), "sh -c 'echo '\\''hi'\\'' there'");
  EXPECT_EQ(display_command({"printf", "a\nb"}), "printf $'a\\nb'");
  EXPECT_EQ(display_command({"x", "\xff"}), "x $'\\xff'");
  EXPECT_EQ(display_command({"x", ""}), "x ''");
}

TEST(DescribeWaitStatus, ExitCodesAndSignals) {
  EXPECT_EQ(describe_wait_status(3 << 8, "job").exit_status, 3);
  EXPECT_TRUE(describe_wait_status(0, "job").message.empty());
  const ExitDescription killed = describe_wait_status(SIGKILL, "job");
  EXPECT_EQ(killed.exit_status, 137);
  EXPECT_EQ(killed.signal, 9);
  EXPECT_EQ(killed.message, "job was killed by SIGKILL (signal 9); the OOM killer does this when memory runs out");
  EXPECT_EQ(describe_wait_status(SIGTERM, "job").message, "job was killed by SIGTERM (signal 15)");
  // Never the OOM hint for a SIGKILL qprof sent itself; the OOM killer named where the kernel said so.
  EXPECT_EQ(describe_wait_status(SIGKILL, "job", KillSource::qprof_timeout).message,
            "job was killed by SIGKILL (signal 9); qprof sent it after --timeout and the grace period");
  EXPECT_EQ(describe_wait_status(SIGKILL, "job", KillSource::oom_killer).message,
            "job was killed by SIGKILL (signal 9); the OOM killer killed it (oom_kill in the tree's cgroup)");
  // qprof's --timeout sent the SIGTERM (said with -q too, where no other line says it); a SIGKILL
  // after it that qprof did not send is not its own.
  EXPECT_EQ(describe_wait_status(SIGTERM, "job", KillSource::qprof_timeout_term).message,
            "job was killed by SIGTERM (signal 15); qprof sent it: --timeout");
  EXPECT_EQ(describe_wait_status(SIGKILL, "job", KillSource::qprof_timeout_term).message,
            "job was killed by SIGKILL (signal 9); the OOM killer does this when memory runs out");
}

TEST(FindProgram, AsAShellSearchesPath) {
  EXPECT_FALSE(find_program("sh").empty());
  EXPECT_EQ(find_program("qprof-no-such-program-here"), "");
  EXPECT_EQ(find_program("/nonexistent/gnuplot"), "");
  EXPECT_EQ(find_program("/bin/sh"), "/bin/sh");
  EXPECT_EQ(find_program(""), "");
  // In the folders given: a file without the execute bit and a folder of the name are passed
  // over, the first executable file wins, and an empty entry is the current folder.
  const std::string dir = test::unit_temp_file("find-program");
  std::filesystem::remove_all(dir);
  for (const char* d : {"/plain", "/folder/tool", "/exec", "/later", "/here"})
    std::filesystem::create_directories(dir + d);
  for (const char* f : {"/plain/tool", "/exec/tool", "/later/tool", "/here/tool"})
    std::fclose(std::fopen((dir + f).c_str(), "w"));
  using std::filesystem::perms;
  std::filesystem::permissions(dir + "/plain/tool", perms::owner_read | perms::owner_write);
  for (const char* f : {"/exec/tool", "/later/tool", "/here/tool"})
    std::filesystem::permissions(dir + f, perms::owner_all);
  const std::string folders = dir + "/plain:" + dir + "/folder:" + dir + "/exec:" + dir + "/later";
  EXPECT_EQ(find_program("tool", folders), dir + "/exec/tool");
  EXPECT_EQ(find_program("tool", dir + "/plain:" + dir + "/folder"), "");
  const std::string cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir + "/here");
  EXPECT_EQ(find_program("tool", dir + "/plain::" + dir + "/later"), "./tool");
  std::filesystem::current_path(cwd);
  std::filesystem::remove_all(dir);
}

// qprof's own work given to launch() runs once, in qprof, while the child execs; exec's outcome
// is reported as without it, and an exception of that work comes out of launch() once the
// child is reaped (killed first when it exec'd: no command runs unwatched).
TEST(Launch, WorkWhileTheChildExecsRunsOnceAndChangesNothingElse) {
  // Nothing of Boost.Process may take SIGCHLD from qprof's run loop.
  struct sigaction chld_before {};
  ASSERT_EQ(::sigaction(SIGCHLD, nullptr, &chld_before), 0);
  const pid_t self = ::getpid();
  int runs = 0;
  pid_t ran_in = 0;
  LaunchRequest ok;
  ok.argv = {"sh", "-c", "exit 7"};
  ok.while_exec = [&] { ++runs, ran_in = ::getpid(); };
  const auto started = launch(ok);
  ASSERT_TRUE(started.ok());
  int status = 0;
  ASSERT_EQ(::waitpid(*started, &status, 0), *started);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 7);
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(ran_in, self);
  struct sigaction chld_after {};
  ASSERT_EQ(::sigaction(SIGCHLD, nullptr, &chld_after), 0);
  EXPECT_EQ(chld_after.sa_handler, chld_before.sa_handler);
  EXPECT_EQ(chld_after.sa_flags, chld_before.sa_flags);

  const std::string plain = test::unit_temp_file("launch-not-executable");
  std::fclose(std::fopen(plain.c_str(), "w"));  // found by its path, but without the execute bit
  LaunchRequest denied;
  denied.argv = {plain};
  denied.while_exec = [&] { ++runs; };
  const auto refused = launch(denied);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.failure().status, 126);
  EXPECT_EQ(runs, 2);

  LaunchRequest throwing;
  throwing.argv = {plain};
  throwing.while_exec = [] { throw std::runtime_error("while exec"); };
  EXPECT_THROW((void)launch(throwing), std::runtime_error);
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1) << "the failed child was reaped before the exception";
  EXPECT_EQ(errno, ECHILD);
  // The same after an exec that worked: the command is killed and reaped, not left unwatched.
  throwing.argv = {"sleep", "30"};
  EXPECT_THROW((void)launch(throwing), std::runtime_error);
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1) << "the running child was killed and reaped";
  EXPECT_EQ(errno, ECHILD);
  std::filesystem::remove(plain);
}

// What cannot start is a Failure with a shell's status; the message names the command, and the
// caller puts "qprof: " before it.
TEST(Launch, ACommandThatCannotStartIsAFailure) {
  LaunchRequest missing;
  missing.argv = {"no-such-command-qprof"};
  const Result<pid_t> not_found = launch(missing);
  ASSERT_FALSE(not_found.ok());
  EXPECT_EQ(not_found.failure().status, 127);
  EXPECT_EQ(not_found.failure().message, "no-such-command-qprof: command not found");
  const Result<pid_t> nothing = launch(LaunchRequest{});
  ASSERT_FALSE(nothing.ok());
  EXPECT_EQ(nothing.failure().status, 2);
  EXPECT_EQ(nothing.failure().message, "no command given");
}

// A cgroup the child cannot join is named, with the shell's status for its error (127 for a
// group that is gone, 126 otherwise), and the command never runs outside it.
TEST(Launch, ACgroupThatCannotBeJoinedIsNamed) {
  const std::string marker = test::unit_temp_file("launch-ran-outside-the-cgroup");
  std::filesystem::remove(marker);
  LaunchRequest gone;
  gone.argv = {"sh", "-c", "touch " + marker};
  gone.cgroup_procs = "/nonexistent-qprof-cgroup/cgroup.procs";
  const auto not_joined = launch(gone);
  ASSERT_FALSE(not_joined.ok());
  EXPECT_EQ(not_joined.failure().status, 127);
  EXPECT_EQ(not_joined.failure().message,
            "sh: cannot join the cgroup /nonexistent-qprof-cgroup/cgroup.procs: No such file or directory");

  LaunchRequest folder = gone;  // a path that cannot be written
  folder.cgroup_procs = std::filesystem::temp_directory_path().string();
  const auto refused = launch(folder);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.failure().status, 126);
  EXPECT_EQ(refused.failure().message, "sh: cannot join the cgroup " + folder.cgroup_procs + ": Is a directory");
  EXPECT_FALSE(std::filesystem::exists(marker));
  EXPECT_EQ(::waitpid(-1, nullptr, WNOHANG), -1) << "the children that failed were reaped";
}

}  // namespace
}  // namespace qprof
