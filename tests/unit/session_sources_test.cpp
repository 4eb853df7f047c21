// SPDX-License-Identifier: Apache-2.0
// The parts of a run that read something besides the tree, alone: the marker channel's intake,
// the watched directories, the GPU sampling without a GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "session/gpu_sampling.hpp"
#include "session/marker_intake.hpp"
#include "session/watched_dirs.hpp"
#include "temp_files.hpp"

namespace qprof::record::session {
namespace {

TEST(SessionMarkerIntake, TheChannelIsExportedAndItsLinesReachTheInbox) {
  std::vector<std::string> said;
  Notices notices(said);
  std::atomic<int> wakes{0};
  MarkerIntake intake([&] { ++wakes; });
  intake.open_channel(notices, "");
  ASSERT_NE(intake.channel(), nullptr) << (said.empty() ? "" : said[0]);
  EXPECT_EQ(std::getenv("QPROF_MARK_FD"), std::to_string(intake.channel()->write_fd()));
  EXPECT_EQ(std::getenv("QPROF_MARK_PATH"), intake.channel()->fifo_path());
  intake.start(-1, MarkerMatcher(), nullptr);
  const std::string line = "QPROF_MARK: warm-up\n";
  ASSERT_EQ(::write(intake.channel()->write_fd(), line.data(), line.size()), static_cast<ssize_t>(line.size()));
  for (int i = 0; i < 5000 && !intake.inbox().waiting(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::vector<std::string> labels;
  intake.inbox().take([&](PendingMarker& m) { labels.push_back(m.label); });
  intake.stop(0);
  EXPECT_EQ(labels, std::vector<std::string>{"warm-up"});
  EXPECT_GE(wakes.load(), 1);
  intake.say_drops(notices);
  intake.say_dropped_total(notices);
  EXPECT_TRUE(said.empty());
}

TEST(SessionWatchedDirs, TheWalksGoToTheTraceAndTheirFiguresToTheReport) {
  const std::filesystem::path dir = test::unit_temp_file("watched");
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "data.bin") << std::string(5000, 'x');
  const std::string trace = test::unit_temp_file("watched.dat");
  std::vector<std::string> said;
  Notices notices(said);
  WallAnchor clock;
  WatchedDirs dirs({dir.string()}, 60.0);
  dirs.start(clock);
  RunReport report;
  {
    trace::Writer out(trace);
    dirs.write_definitions(out);
    dirs.drain(out, notices);
    report.watch = dirs.finish(out, notices);
  }
  ASSERT_EQ(report.watch.dirs.size(), 1u);
  EXPECT_EQ(report.watch.dirs[0].path, dir.string());
  EXPECT_TRUE(report.watch.dirs[0].seen);
  EXPECT_GE(report.watch.dirs[0].peak, 5000u);
  EXPECT_EQ(report.watch.dirs[0].start, report.watch.dirs[0].last);
  EXPECT_GE(report.watch.walks, 1u);
  EXPECT_EQ(report.watch.asked_interval, 60.0);
  const std::string text = test::whole_file(trace);
  EXPECT_NE(text.find("DIRDEF 0 "), std::string::npos);
  EXPECT_NE(text.find("\nDIR "), std::string::npos);
  std::filesystem::remove_all(dir);
  std::filesystem::remove(trace);
}

TEST(SessionWatchedDirs, WithoutDirectoriesNothingIsWalkedOrReported) {
  WatchedDirs dirs({}, 1.0);
  WallAnchor clock;
  dirs.start(clock);
  std::vector<std::string> said;
  Notices notices(said);
  const std::string trace = test::unit_temp_file("unwatched.dat");
  RunReport report;
  {
    trace::Writer out(trace);
    dirs.write_definitions(out);
    report.watch = dirs.finish(out, notices);
  }
  EXPECT_TRUE(report.watch.dirs.empty());
  EXPECT_EQ(report.watch.walks, 0u);
  EXPECT_EQ(test::whole_file(trace), "");
  std::filesystem::remove(trace);
}

TEST(SessionGpuSampling, WithGpuNoneNothingIsSampledOrReported) {
  RunOptions options;
  options.gpu = "none";
  std::vector<std::string> said;
  Notices notices(said);
  GpuSampling gpu;
  testing::internal::CaptureStderr();
  gpu.open(options, notices);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_TRUE(said.empty());
  EXPECT_FALSE(gpu.active());
  EXPECT_TRUE(gpu.helpers().empty());
  EXPECT_FALSE(gpu.tree_total());
  const GpuReport report = gpu.finish(notices);
  EXPECT_EQ(report.backend, "");
  EXPECT_FALSE(report.peak);
}

}  // namespace
}  // namespace qprof::record::session
