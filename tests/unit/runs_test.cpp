// SPDX-License-Identifier: Apache-2.0
// The run service below the CLI (runs/): the names its batches give their traces, the signals that
// end a batch, the environment of one run.
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "qprof/runs/command_runs.hpp"
#include "qprof/runs/profiled_run.hpp"
#include "qprof/runs/scoped_env.hpp"
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

}  // namespace
}  // namespace qprof::runs
