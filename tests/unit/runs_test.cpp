// SPDX-License-Identifier: Apache-2.0
// The run service below the CLI (runs/): the names its batches give their traces, the signals that
// end a batch, the environment of one run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "qprof/runs/command_runs.hpp"
#include "qprof/runs/profiled_run.hpp"
#include "qprof/runs/scoped_env.hpp"
#include "qprof/runs/stop_latch.hpp"
#include "qprof/runs/sweep_runs.hpp"
#include "temp_files.hpp"

namespace qprof::runs {
namespace {

TEST(CommandRuns, TraceNamesCountFromOneAndNeverTakeAnExistingFile) {
  const std::string prefix = test::unit_temp_file("cmp");
  std::string taken;
  EXPECT_EQ(command_trace_name(prefix, 1, 0, 0, taken), prefix + "-1.dat");
  EXPECT_EQ(taken, "");
  EXPECT_EQ(command_trace_name(prefix, 3, 1, 2, taken), prefix + "-2-3.dat");
  std::ofstream(prefix + "-1.dat") << "kept";
  std::ofstream(prefix + "-1.run2.dat") << "kept";
  EXPECT_EQ(command_trace_name(prefix, 1, 0, 0, taken), prefix + "-1.run3.dat");
  EXPECT_EQ(taken, prefix + "-1.dat");  // the first name passed over, to be said
  std::filesystem::remove(prefix + "-1.dat");
  std::filesystem::remove(prefix + "-1.run2.dat");
}

TEST(SweepRuns, TracePathNamesEveryValueAndTheRepeatOnlyWhenRepeated) {
  const analysis::SweepPoint point{{"workers", "4"}, {"batch", "16"}};
  EXPECT_EQ(sweep_trace_path("d", point, 1, 1), "d/workers=4,batch=16.dat");
  EXPECT_EQ(sweep_trace_path("d", point, 2, 3), "d/workers=4,batch=16,repeat=2.dat");
}

TEST(ProfiledRun, StopSignalsAreTheTerminalsAndAJobManagers) {
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT}) EXPECT_TRUE(is_stop_signal(sig)) << sig;
  for (int sig : {0, SIGKILL, SIGSEGV, SIGCHLD, SIGTSTP, SIGPIPE}) EXPECT_FALSE(is_stop_signal(sig)) << sig;
}

TEST(ScopedEnv, SetsForOneRunAndPutsBackWhatWasThere) {
  const char* name = "QPROF_UNIT_SCOPED_ENV";
  ::unsetenv(name);
  {
    const ScopedEnv set(name, "1");
    EXPECT_STREQ(std::getenv(name), "1");
  }
  EXPECT_EQ(std::getenv(name), nullptr);  // unset again, not left empty
  ::setenv(name, "old", 1);
  {
    const ScopedEnv set(name, "new");
    EXPECT_STREQ(std::getenv(name), "new");
  }
  EXPECT_STREQ(std::getenv(name), "old");
  ::unsetenv(name);
}

record::RunOptions quiet_run(const std::vector<std::string>& command, const std::string& output) {
  record::RunOptions o;
  o.command = command;
  o.output = output;
  o.quiet = true;
  o.live = false;
  o.cgroup = record::CgroupMode::off;
  o.record_pss = false;
  o.gpu = "none";
  return o;
}

// A run in this process, as compare and sweep run theirs: its status, its trace read back through
// the descriptor written, the signal that ended it.
TEST(ProfiledRun, ReadsTheTraceBackAndSaysTheStatusAndTheStopSignal) {
  const std::string path = test::unit_temp_file("run.dat");
  Result<ProfiledRun> ran = run_and_read({quiet_run({"/bin/sh", "-c", "exit 3"}, path), true, false, {}});
  ASSERT_TRUE(ran) << ran.failure().message;
  EXPECT_EQ(ran->status, 3);
  EXPECT_EQ(ran->state, TraceState::read) << ran->problem;
  EXPECT_EQ(ran->stop_signal, 0);
  ASSERT_TRUE(ran->trace.exit);
  EXPECT_EQ(ran->trace.exit->status, 3) << "the trace read back is this run's";

  Result<ProfiledRun> killed = run_and_read({quiet_run({"/bin/sh", "-c", "kill -HUP $$"}, path), false, false, {}});
  ASSERT_TRUE(killed) << killed.failure().message;
  EXPECT_EQ(killed->status, 128 + SIGHUP);
  EXPECT_EQ(killed->stop_signal, SIGHUP);
  EXPECT_EQ(killed->state, TraceState::not_read) << "not asked for";
  std::filesystem::remove(path);
}

TEST(ProfiledRun, ACommandThatCannotStartFailsAndItsMadeUpTraceGoes) {
  const std::string path = test::unit_temp_file("missing.dat");
  std::ofstream(path).close();  // as create_fresh leaves it
  Result<ProfiledRun> ran = run_and_read({quiet_run({"/nonexistent/qprof-unit"}, path), true, true, {}});
  ASSERT_FALSE(ran);
  EXPECT_EQ(ran.failure().status, 127);
  EXPECT_FALSE(std::filesystem::exists(path)) << "the empty trace made for the run is removed";
}

// A run says what it has to say through the caller's speaker and prints nothing itself: the
// command's killing signal as a line, the summary as text.
TEST(ProfiledRun, SaysThroughTheCallersSpeakerAndPrintsNothing) {
  const std::string path = test::unit_temp_file("said.dat");
  std::vector<std::string> lines;
  std::string text;
  RunRequest request{quiet_run({"/bin/sh", "-c", "kill -TERM $$"}, path), false, false, {}};
  request.options.quiet = false;
  request.speaker =
      Speaker([&](const std::string& l) { lines.push_back(l); }, [&](const std::string& t) { text += t; });
  testing::internal::CaptureStderr();
  Result<ProfiledRun> ran = run_and_read(request);
  const std::string printed = testing::internal::GetCapturedStderr();
  ASSERT_TRUE(ran) << ran.failure().message;
  EXPECT_EQ(printed, "") << "nothing printed by the run itself";
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "/bin/sh was killed by SIGTERM (signal 15)");
  EXPECT_NE(text.find("qprof:   trace           " + path), std::string::npos) << text;

  lines.clear();
  text.clear();
  request.options.quiet = true;
  request.options.command = {"/nonexistent/qprof-unit"};
  EXPECT_FALSE(run_and_read(request));
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0], "/nonexistent/qprof-unit: No such file or directory");
  EXPECT_EQ(text, "") << "no summary for a command that never ran";
  std::filesystem::remove(path);
}

// Between two runs a stop signal is noted, never qprof's death; the first one counts; the previous
// dispositions come back; a signal ignored by whoever started qprof (nohup) stays ignored.
TEST(StopLatch, NotesTheFirstStopSignalAndPutsTheHandlersBack) {
  struct sigaction before {};
  ::sigaction(SIGHUP, nullptr, &before);
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction quit_before {};
  ::sigaction(SIGQUIT, &ignore, &quit_before);
  {
    const StopLatch latch;
    EXPECT_EQ(latch.signal(), 0);
    ::raise(SIGHUP);  // delivered before raise returns: the default action would end the test
    EXPECT_EQ(latch.signal(), SIGHUP);
    ::raise(SIGTERM);
    EXPECT_EQ(latch.signal(), SIGHUP) << "the first one counts";
    struct sigaction quit {};
    ::sigaction(SIGQUIT, nullptr, &quit);
    EXPECT_EQ(quit.sa_handler, SIG_IGN) << "an ignored signal stays ignored";
  }
  {
    const StopLatch latch;
    EXPECT_EQ(latch.signal(), 0) << "a new batch forgets the last one's signal";
  }
  struct sigaction after {};
  ::sigaction(SIGHUP, nullptr, &after);
  EXPECT_EQ(after.sa_handler, before.sa_handler);
  ::sigaction(SIGQUIT, &quit_before, nullptr);
}

}  // namespace
}  // namespace qprof::runs
