// SPDX-License-Identifier: Apache-2.0
// The live status's frame alone, without a terminal.
#include <gtest/gtest.h>
#include <unistd.h>

#include "session/live_view.hpp"

namespace qprof::record::session {
namespace {

TEST(SessionLiveView, AFrameSaysTheElapsedTimeMemoryCpuAndStage) {
  LiveView view(nullptr, 1000000000);
  view.set_cpu_percent(150.0);
  const LiveStatus s = view.status(3500000000, 100, 200, Bytes{300});
  EXPECT_DOUBLE_EQ(s.elapsed, 2.5);
  EXPECT_EQ(s.rss, 100u);
  EXPECT_EQ(s.peak_rss, 200u);
  EXPECT_EQ(s.gpu, Bytes{300});
  EXPECT_EQ(s.cpu_percent, 150.0);
}

TEST(SessionLiveView, WithoutALineNothingIsKeptOrDrawn) {
  LiveView view(nullptr, 0);
  EXPECT_EQ(view.line(), nullptr);
  view.set_stage("train");
  EXPECT_EQ(view.status(0, 0, 0, std::nullopt).stage, "");
  EXPECT_FALSE(view.status(0, 0, 0, std::nullopt).cpu_percent);
  view.show(0, 1, 1, std::nullopt);  // nothing to draw on
  view.suspend();
  view.resume();
  view.close();
}

TEST(SessionLiveView, WithALineTheLatestMarkerIsTheStage) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  LiveView view(std::make_unique<LiveLine>(fds[1]), 0);
  view.set_stage("load");
  view.set_stage("train");
  EXPECT_EQ(view.status(0, 0, 0, std::nullopt).stage, "train");
  view.close();
  ::close(fds[0]);
  ::close(fds[1]);
}

}  // namespace
}  // namespace qprof::record::session
