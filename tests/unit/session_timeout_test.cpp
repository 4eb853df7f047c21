// SPDX-License-Identifier: Apache-2.0
// The timeout's decisions alone, and when the exit tracker calls the run over; no process is
// signalled or reaped here.
#include <gtest/gtest.h>

#include "session/exit_tracker.hpp"
#include "session/timeout.hpp"

namespace qprof::record::session {
namespace {

constexpr std::int64_t kS = 1000000000;
using Action = Timeout::Action;

TEST(SessionTimeout, WithoutATimeoutNothingIsEverDue) {
  Timeout t(std::nullopt, 5.0, 0, false);
  EXPECT_EQ(t.due(1000 * kS, true), Action::none);
  EXPECT_FALSE(t.next_deadline());
  EXPECT_FALSE(t.timed_out());
}

TEST(SessionTimeout, TerminateAtTheTimeoutThenKillAfterTheGrace) {
  Timeout t(10.0, 2.0, 100 * kS, false);
  EXPECT_EQ(t.next_deadline(), 110 * kS);
  EXPECT_EQ(t.due(110 * kS - 1, true), Action::none);
  EXPECT_EQ(t.due(111 * kS, true), Action::terminate);  // late: the grace counts from now
  EXPECT_TRUE(t.timed_out());
  EXPECT_FALSE(t.killed());
  EXPECT_EQ(t.next_deadline(), 113 * kS);
  EXPECT_EQ(t.due(112 * kS, true), Action::none);  // terminated once only
  EXPECT_EQ(t.due(113 * kS, true), Action::kill);
  EXPECT_TRUE(t.killed());
  EXPECT_FALSE(t.next_deadline());
  EXPECT_EQ(t.due(200 * kS, true), Action::none);  // killed once only
}

TEST(SessionTimeout, NothingIsDueOnceTheCommandEndedUnlessDaemonsAreWaitedFor) {
  Timeout t(1.0, 1.0, 0, false);
  EXPECT_EQ(t.due(5 * kS, false), Action::none);
  EXPECT_FALSE(t.timed_out());
  EXPECT_EQ(t.due(5 * kS, true), Action::terminate);
}

TEST(SessionTimeout, AttachedTheTimeoutStopsTheAttachAndSignalsNothing) {
  Timeout t(3.0, 1.0, 0, true);
  EXPECT_EQ(t.due(3 * kS, true), Action::stop_attach);
  EXPECT_TRUE(t.timed_out());
  EXPECT_TRUE(t.killed());
  EXPECT_EQ(t.due(10 * kS, true), Action::none);
}

TEST(SessionTimeout, KeepsWhatWasAskedForItsMessages) {
  const Timeout t(7.5, 0.25, 0, false);
  EXPECT_EQ(t.length(), 7.5);
  EXPECT_EQ(t.grace(), 0.25);
}

ExitTracker tracker(bool attached, bool wait_daemons) {
  ExitTracker::Command command;
  command.pid = 4242;
  command.attached = attached;
  return ExitTracker(command, wait_daemons, Timeout(std::nullopt, 1.0, 0, attached));
}

TEST(SessionExitTracker, ARunIsNotOverWhileTheCommandRuns) {
  EXPECT_FALSE(tracker(false, false).finished(true));
  EXPECT_FALSE(tracker(false, true).finished(true));
  EXPECT_FALSE(tracker(true, false).finished(true));
}

TEST(SessionExitTracker, ALaunchedCommandsStatusIsKnownAnAttachedOnesOnlyOnceSeen) {
  EXPECT_TRUE(tracker(false, false).wait_status_known());
  EXPECT_FALSE(tracker(true, false).wait_status_known());
  EXPECT_EQ(tracker(false, false).pid(), 4242);
  EXPECT_FALSE(tracker(false, false).exited());
  EXPECT_EQ(tracker(false, false).kernel_peak(), 0u);
}

}  // namespace
}  // namespace qprof::record::session
