// SPDX-License-Identifier: Apache-2.0
// `mprof run -o FILE` appends: a file of several runs, each under its own CMDLINE, is read as one
// trace under the last command, and where the second run starts is said. mprof's wall clock can
// step back: where it did is said too.
#include <gtest/gtest.h>

#include <fstream>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "qprof/trace/completeness.hpp"
#include "qprof/trace/format.hpp"
#include "temp_files.hpp"

namespace qprof::trace {
namespace {

TEST(Reader, ASecondCmdlineIsARunAppendedReadUnderTheLastCommand) {
  const Trace one = read_trace_text("CMDLINE a\nMEM 1.0 2.0\n", "one.dat");
  EXPECT_EQ(one.second_run_line, 0u);
  const Trace two = read_trace_text("CMDLINE a\nMEM 1.0 2.0\nCMDLINE b\nMEM 2.0 9.0\nCMDLINE c\n", "two.dat");
  EXPECT_EQ(two.second_run_line, 3u) << "the first line the second run wrote";
  EXPECT_EQ(two.cmdline, "c");
  const std::vector<std::string> said = reading_notices(two);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0].rfind("two.dat:3: a second run starts here", 0), 0u) << said[0];
}

// A run is a CMDLINE record, whatever its text: the whole reader, the reduced reader (report's)
// and the completeness check (export's, peak's) name the same line when the first is empty.
TEST(Reader, ARunAppendedAfterAnEmptyCommandIsFoundByEveryReader) {
  const test::RemovedTempFile file("empty_first_cmdline.dat");
  std::ofstream(file.path()) << "CMDLINE \nMEM 1.0 1700000000.0\nCMDLINE b\nMEM 2.0 1700000001.0\n";
  const Trace whole = read_trace(file.path());
  EXPECT_EQ(whole.second_run_line, 3u);
  EXPECT_EQ(whole.cmdline, "b");
  const std::optional<Trace> reduced = read_trace_reduced(file.path(), 0.5);
  ASSERT_TRUE(reduced.has_value());
  EXPECT_EQ(reduced->second_run_line, 3u);
  EXPECT_EQ(file_completeness(file.path()).second_run, 3u);
}

// The first MEM line earlier than a sample before it, and by how much; equal times are not back.
TEST(BackwardClock, TheFirstStepBackAndItsSize) {
  BackwardClock c;
  c.mem_at(10.0, 2);
  c.mem_at(10.0, 3);
  c.mem_at(10.5, 4);
  EXPECT_EQ(c.findings().back_line, 0u);
  c.mem_at(10.2, 5);  // behind the latest, 10.5
  c.mem_at(9.0, 6);   // a second step is not the first
  EXPECT_EQ(c.findings().back_line, 5u);
  EXPECT_NEAR(c.findings().back_by, 0.3, 1e-9);
}

// A clock given the header's `start` and `interval`, then MEM lines from line 3 at `times`.
BackwardClock clock_of(std::optional<Seconds> start, Seconds interval, std::initializer_list<Seconds> times) {
  BackwardClock c;
  c.start_at(start, interval);
  std::size_t line = 3;
  for (Seconds t : times) c.mem_at(t, line++);
  return c;
}

// The header's start is the clock's first reading: a first sample before it went back; one far
// after it (a minute, or three intervals where they are longer) came late. Later samples do not
// count against the start.
TEST(BackwardClock, TheFirstSampleAgainstTheHeadersStart) {
  const BackwardClock before = clock_of(100.0, 0.1, {99.5});
  EXPECT_EQ(before.findings().back_line, 3u);
  EXPECT_NEAR(before.findings().back_by, 0.5, 1e-9);
  EXPECT_EQ(before.findings().late_line, 0u);

  // Two reads of the clock, each rounded to the microsecond; a quiet stretch later in the run is
  // not a late start.
  const BackwardClock with_it = clock_of(100.0, 0.1, {99.9995, 100.1, 400.0});
  EXPECT_EQ(with_it.findings().back_line, 0u);
  EXPECT_EQ(with_it.findings().late_line, 0u);

  const BackwardClock late = clock_of(100.0, 0.1, {161.0});
  EXPECT_EQ(late.findings().late_line, 3u);
  EXPECT_NEAR(late.findings().late_by, 61.0, 1e-9);
  EXPECT_EQ(late.findings().back_line, 0u);

  // -i 60: the first sample may come a few intervals in.
  EXPECT_EQ(clock_of(100.0, 60.0, {250.0}).findings().late_line, 0u);

  const BackwardClock no_header = clock_of(std::nullopt, 0, {1e9});  // mprof's: its first sample is the start
  EXPECT_EQ(no_header.findings().back_line, 0u);
  EXPECT_EQ(no_header.findings().late_line, 0u);
}

// A header whose start is three years before the first sample: every reader names the line.
TEST(BackwardClock, AFirstSampleFarAfterTheStartIsSaid) {
  const test::RemovedTempFile file("late_start.dat");
  std::ofstream(file.path()) << "QPROF 1 version=0.1.0 interval=0.100000 host=h root_pid=1 start=1600000000.000000 "
                                "metric=rss\nCMDLINE j\nMEM 2.0 1700000000.0\nMEM 2.0 1700000000.1\n"
                                "EXIT 1700000000.2 status=0 signal=0 timed_out=0\n";
  const Trace whole = read_trace(file.path());
  EXPECT_EQ(whole.clock.late_line, 3u);
  EXPECT_NEAR(whole.clock.late_by, 1e8, 1e-3);
  const std::optional<Trace> reduced = read_trace_reduced(file.path(), 0.5);
  ASSERT_TRUE(reduced.has_value());
  EXPECT_EQ(reduced->clock.late_line, 3u);
  EXPECT_EQ(file_completeness(file.path()).clock.late_line, 3u);
  const std::vector<std::string> said = reading_notices(whole);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0].rfind(file.path() + ":3: the first sample comes 1157 d 9 h after the header's start", 0), 0u)
      << said[0];
}

// The whole reader and the completeness check (export's, peak's) name the same line (the reduced
// reader, report's, gives such a trace to the whole one); the notice says it once, with the step.
TEST(BackwardClock, EveryReaderNamesTheSameLine) {
  const test::RemovedTempFile file("clock_back.dat");
  std::ofstream(file.path()) << "CMDLINE j\nMEM 1.0 1700000000.1\nMEM 5.0 1700000000.0\nMEM 3.0 1700000000.2\n";
  const Trace whole = read_trace(file.path());
  EXPECT_EQ(whole.clock.back_line, 3u);
  EXPECT_FALSE(read_trace_reduced(file.path(), 0.5).has_value()) << "read whole";
  EXPECT_EQ(file_completeness(file.path()).clock.back_line, 3u);
  const std::vector<std::string> said = reading_notices(whole);
  ASSERT_EQ(said.size(), 1u);
  EXPECT_EQ(said[0].rfind(file.path() + ":3: the clock went back 100 ms here", 0), 0u) << said[0];
}

}  // namespace
}  // namespace qprof::trace
