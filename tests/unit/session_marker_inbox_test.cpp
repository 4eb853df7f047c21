// SPDX-License-Identifier: Apache-2.0
// The marker inbox alone: order, the bound both sources share, and the wake-ups.
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "session/marker_inbox.hpp"

namespace qprof::record::session {
namespace {

std::vector<std::string> take_labels(MarkerInbox& inbox) {
  std::vector<std::string> labels;
  inbox.take([&](PendingMarker& m) { labels.push_back(m.label); });
  return labels;
}

TEST(SessionMarkerInbox, TakesMarkersOfBothSourcesInTheOrderTheyArrived) {
  std::atomic<int> wakes{0};
  MarkerInbox inbox([&] { ++wakes; });
  EXPECT_TRUE(inbox.post(PendingMarker{"channel one", {}, {}}));
  EXPECT_TRUE(inbox.post(PendingMarker{"stderr two", {}, {}}));
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

TEST(SessionMarkerInbox, OnceTheLoopEndedWhatThePipesHoldIsQueuedForTheFinalTakeUpToItsBound) {
  MarkerInbox inbox([] {});
  inbox.end_loop();
  for (std::size_t i = 0; i < MarkerInbox::kMaxWaitingAtEnd; ++i) {
    ASSERT_TRUE(inbox.post(PendingMarker{std::to_string(i), {}, {}})) << i;
  }
  EXPECT_FALSE(inbox.post(PendingMarker{"one too many", {}, {}}));
  EXPECT_EQ(take_labels(inbox).size(), MarkerInbox::kMaxWaitingAtEnd);
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

TEST(SessionMarkerInbox, AfterTheLoopAPostNeitherWakesNorWaits) {
  std::atomic<int> wakes{0};
  MarkerInbox inbox([&] { ++wakes; });
  inbox.end_loop();
  EXPECT_TRUE(inbox.post(PendingMarker{"late", {}, {}}));
  EXPECT_EQ(wakes.load(), 0);
  EXPECT_TRUE(inbox.waiting());  // for the final take
  EXPECT_EQ(take_labels(inbox), std::vector<std::string>{"late"});
}

}  // namespace
}  // namespace qprof::record::session
