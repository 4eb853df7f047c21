// SPDX-License-Identifier: Apache-2.0
// The trace's lifecycle alone: flushes on the cadence, the first failure said and told once,
// the file removed when the command never started; and the notices written into it.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "session/notices.hpp"
#include "session/trace_sink.hpp"
#include "temp_files.hpp"

namespace qprof::record::session {
namespace {

constexpr std::int64_t kMs = 1000000;

TraceOutput output_to(const std::string& path, bool readable_back = true) {
  TraceOutput out;
  out.fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  out.path = path;
  out.readable_back = readable_back;
  return out;
}

TEST(SessionTraceSink, FlushesOnTheCadenceOrBeforeALongSleep) {
  const std::string path = test::unit_temp_file("sink-cadence.dat");
  TraceSink sink(output_to(path), {});
  sink.start_cadence(1000 * kMs);
  sink.writer().note("one");
  sink.flush_if_due(1050 * kMs, 1060 * kMs);  // 50 ms since the last, a 10 ms sleep
  EXPECT_EQ(test::whole_file(path), "");
  sink.flush_if_due(1050 * kMs, 1150 * kMs);  // about to sleep 100 ms
  EXPECT_NE(test::whole_file(path).find("NOTE one"), std::string::npos);
  sink.writer().note("two");
  sink.flush_if_due(1100 * kMs, 1101 * kMs);  // the cadence counts from the last flush
  EXPECT_EQ(test::whole_file(path).find("NOTE two"), std::string::npos);
  sink.flush_if_due(1150 * kMs, 1151 * kMs);
  EXPECT_NE(test::whole_file(path).find("NOTE two"), std::string::npos);
  sink.close();
  EXPECT_TRUE(sink.intact());
  std::filesystem::remove(path);
}

TEST(SessionTraceSink, TheFirstFailedWriteIsSaidAndToldOnceAndTheRunGoesOn) {
  if (!std::filesystem::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
  int failures = 0;
  std::vector<std::string> said;
  TraceSink sink(
      output_to("/dev/full", false), [&] { ++failures; },
      Speaker([&](const std::string& line) { said.push_back(line); }, {}));
  sink.writer().note("lost");
  sink.flush();
  sink.writer().note("lost too");
  sink.flush();
  sink.close();
  EXPECT_FALSE(sink.intact());
  EXPECT_EQ(failures, 1);
  ASSERT_EQ(said.size(), 1u) << "said once, at the first failure";
  EXPECT_EQ(said[0].find(sink.error()), 0u);
  EXPECT_NE(said[0].find("the command goes on, sampled into memory only"), std::string::npos);
}

TEST(SessionTraceSink, DiscardRemovesAFileButNeverAStream) {
  const std::string file = test::unit_temp_file("sink-discard.dat");
  TraceOutput created = output_to(file, true);
  created.created = true;
  TraceSink(created, {}).discard();
  EXPECT_FALSE(std::filesystem::exists(file));
  // A file that was there before the run: never emptied before the command started, never removed.
  const std::string old = test::unit_temp_file("sink-old.dat");
  { std::ofstream(old) << "old trace\n"; }
  TraceOutput existing;
  existing.fd = ::open(old.c_str(), O_WRONLY | O_CLOEXEC);
  existing.path = old;
  existing.readable_back = true;
  existing.to_empty = true;
  TraceSink(existing, {}).discard();
  EXPECT_EQ(test::whole_file(old), "old trace\n");
  TraceOutput started = existing;
  started.fd = ::open(old.c_str(), O_WRONLY | O_CLOEXEC);
  TraceSink sink(started, {});
  sink.begin();  // the command started: the old content goes now
  sink.close();
  EXPECT_EQ(test::whole_file(old), "");
  std::filesystem::remove(old);
  const std::string stream = test::unit_temp_file("sink-stream.dat");
  TraceSink(output_to(stream, false), {}).discard();
  EXPECT_TRUE(std::filesystem::exists(stream));
  std::filesystem::remove(stream);
}

TEST(SessionNotices, QuietKeepsAWarningForTheSummaryAndSaysNothing) {
  std::vector<std::string> said, spoken;
  Notices notices(said, true, Speaker([&spoken](const std::string& line) { spoken.push_back(line); }, {}));
  notices.warn("the limit is near");
  EXPECT_TRUE(spoken.empty());
  EXPECT_EQ(said, (std::vector<std::string>{"the limit is near"}));
}

TEST(SessionNotices, WarningsBeforeTheHeaderWaitForItThenQuietNotesThenAsTheyCome) {
  const std::string path = test::unit_temp_file("notices.dat");
  std::vector<std::string> said;
  std::vector<std::string> spoken;
  Notices notices(said, false, Speaker([&spoken](const std::string& line) { spoken.push_back(line); }, {}));
  TraceSink sink(output_to(path), {});
  testing::internal::CaptureStderr();
  notices.warn("early");
  notices.note_quietly("no GPU found");
  notices.write_to(sink.writer());
  notices.warn("late");
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");  // said through the speaker alone
  sink.close();
  EXPECT_EQ(spoken, (std::vector<std::string>{"early", "late"}));  // the quiet note is the trace's only
  EXPECT_EQ(said, (std::vector<std::string>{"early", "late"}));
  const std::string trace = test::whole_file(path);
  const auto early = trace.find("NOTE early"), quiet = trace.find("NOTE no GPU found"), late = trace.find("NOTE late");
  ASSERT_NE(late, std::string::npos);
  EXPECT_LT(early, quiet);
  EXPECT_LT(quiet, late);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace qprof::record::session
