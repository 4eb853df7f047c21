// SPDX-License-Identifier: Apache-2.0
// The marker inbox alone: order, the channel's bound, and the tee's wait for its checkpoint.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "session/marker_inbox.hpp"

namespace qprof::session_detail {
namespace {

std::vector<std::string> take_labels(MarkerInbox& inbox) {
  std::vector<std::string> labels;
  inbox.take([&](PendingMarker& m) { labels.push_back(m.label); });
  return labels;
}

TEST(SessionMarkerInbox, TakesMarkersOfBothSourcesInTheOrderTheyArrived) {
  std::atomic<int> wakes{0};
  MarkerInbox inbox([&] { ++wakes; });
  inbox.end_loop();  // the tee's post then returns at once: this test is the only thread
  EXPECT_TRUE(inbox.post(PendingMarker{"channel one", {}, {}}));
  inbox.post_and_wait("stderr two");
  EXPECT_TRUE(inbox.post(PendingMarker{"channel three", {}, "/tmp/reply"}));
  EXPECT_TRUE(inbox.waiting());
  EXPECT_EQ(take_labels(inbox), (std::vector<std::string>{"channel one", "stderr two", "channel three"}));
  EXPECT_FALSE(inbox.waiting());
  EXPECT_TRUE(take_labels(inbox).empty());
}

TEST(SessionMarkerInbox, ChannelMarkersBeyondTheBoundAreDroppedUntilTaken) {
  MarkerInbox inbox([] {});
  for (std::size_t i = 0; i < MarkerInbox::kMaxWaiting; ++i) {
    ASSERT_TRUE(inbox.post(PendingMarker{std::to_string(i), {}, {}}));
  }
  EXPECT_FALSE(inbox.post(PendingMarker{"one too many", {}, {}}));
  const std::vector<std::string> taken = take_labels(inbox);
  ASSERT_EQ(taken.size(), MarkerInbox::kMaxWaiting);
  EXPECT_EQ(taken.front(), "0");
  EXPECT_EQ(taken.back(), std::to_string(MarkerInbox::kMaxWaiting - 1));
  EXPECT_TRUE(inbox.post(PendingMarker{"room again", {}, {}}));
}

TEST(SessionMarkerInbox, AChannelPostWakesTheSampler) {
  std::atomic<int> wakes{0};
  MarkerInbox inbox([&] { ++wakes; });
  inbox.post(PendingMarker{"m", {}, {}});
  EXPECT_EQ(wakes.load(), 1);
}

TEST(SessionMarkerInbox, AMarkerCountsAsTakenOnlyOnceItsCheckpointReturned) {
  MarkerInbox inbox([] {});
  inbox.post(PendingMarker{"m", {}, {}});
  bool waiting_during_checkpoint = false;
  inbox.take([&](PendingMarker&) { waiting_during_checkpoint = inbox.waiting(); });
  EXPECT_TRUE(waiting_during_checkpoint);
  EXPECT_FALSE(inbox.waiting());
}

TEST(SessionMarkerInbox, TheTeeWaitsUntilTheSamplerTookItsMarker) {
  std::atomic<int> wakes{0};
  MarkerInbox inbox([&] { ++wakes; });
  std::atomic<bool> returned{false};
  std::thread tee([&] {
    inbox.post_and_wait("stage");
    returned = true;
  });
  // The sampler, woken, takes it; the tee returns only after that.
  while (wakes.load() == 0) std::this_thread::yield();
  std::vector<std::string> labels;
  while (labels.empty()) labels = take_labels(inbox);
  tee.join();
  EXPECT_TRUE(returned);
  EXPECT_EQ(labels, std::vector<std::string>{"stage"});
}

TEST(SessionMarkerInbox, AfterTheLoopTheTeeNeitherWakesNorWaits) {
  std::atomic<int> wakes{0};
  MarkerInbox inbox([&] { ++wakes; });
  inbox.end_loop();
  inbox.post_and_wait("late");
  EXPECT_EQ(wakes.load(), 0);
  EXPECT_TRUE(inbox.waiting());  // for the final take
  EXPECT_EQ(take_labels(inbox), std::vector<std::string>{"late"});
}

}  // namespace
}  // namespace qprof::session_detail
