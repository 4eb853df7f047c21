// SPDX-License-Identifier: Apache-2.0
// Σ VmHWM as a bound of the tree's peak, summing only the processes alive together: one window
// per stats pass, departures counted in the windows after their last reading, bounds that come
// later (an ancestor's wait4) raising exactly those windows.
#include "qprof/record/hwm_bound.hpp"

#include <gtest/gtest.h>

#include "fake_proc.hpp"
#include "qprof/record/accounting.hpp"

namespace qprof {
using record::HwmBound;
using record::Member;
using record::ProcTree;
using record::TreeAccounting;
namespace {

constexpr Bytes kMiB = Bytes{1} << 20;

TEST(HwmBound, SequentialChildrenDoNotAddUp) {
  HwmBound b;
  const Bytes root = 300 * kMiB;
  // Five children, each forked (its mark starts at the root's size) and gone within one window.
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(b.close(root), i == 0 ? root : 2 * root);  // a window with the root alone, then…
    b.departed(HwmBound::kNever, root);                  // …one with a child
    b.close(root);
  }
  EXPECT_EQ(b.bound(), 2 * root) << "the root and one child at a time, not six processes";
}

TEST(HwmBound, ChildrenAliveTogetherAddUp) {
  HwmBound b;
  b.close(10 * kMiB);
  b.departed(HwmBound::kNever, 5 * kMiB);
  b.departed(HwmBound::kNever, 7 * kMiB);
  EXPECT_EQ(b.close(10 * kMiB), 22 * kMiB);
}

TEST(HwmBound, ADepartureCountsInEveryWindowAfterItsLastReading) {
  HwmBound b;
  b.close(100 * kMiB);  // window 0: read, 100 MiB
  b.close(100 * kMiB);  // window 1: read again (its last good reading)
  const HwmBound::Window last_read = 1;
  b.close(0);  // windows 2 and 3: its reads failed (gone), others were alone
  b.close(0);
  // Found gone in window 4 with a bound of 150 MiB: windows 2, 3 and 4 each hold it.
  const auto r = b.departed(last_read + 1, 150 * kMiB);
  EXPECT_EQ(r.from, 2u);
  EXPECT_EQ(r.to, 4u);
  EXPECT_EQ(b.close(20 * kMiB), 170 * kMiB);
  EXPECT_EQ(b.bound(), 170 * kMiB);
}

TEST(HwmBound, ALateBoundRaisesOnlyItsWindowsEvenLongAfter) {
  HwmBound b;
  b.close(50 * kMiB);
  const auto r = b.departed_pending(HwmBound::kNever, 2 * kMiB);  // reaped by its parent
  b.close(50 * kMiB);
  for (int i = 0; i < 100; ++i) b.close(60 * kMiB);  // far beyond the recent windows kept
  EXPECT_EQ(b.bound(), 60 * kMiB);
  b.settle(r, 40 * kMiB - 2 * kMiB);  // the ancestor's ru_maxrss: it may have reached 40 MiB
  EXPECT_EQ(b.bound(), 90 * kMiB) << "its window: 50 MiB alive plus 40 MiB";
  b.close(60 * kMiB);
  EXPECT_EQ(b.bound(), 90 * kMiB);
}

TEST(HwmBound, ADepartureOlderThanTheWindowsKeptStillCounts) {
  HwmBound b;
  for (int i = 0; i < 40; ++i) b.close(10 * kMiB);
  // Last read 30 windows ago (its reads failed since): the sums of most of those windows are no
  // longer kept, so the bound itself takes it, whole.
  const auto r = b.departed(10, 25 * kMiB);
  EXPECT_TRUE(r.beyond);
  EXPECT_GE(b.close(10 * kMiB), 35 * kMiB);
}

// Through TreeAccounting over a synthetic /proc: a 300 MiB root that runs five short children
// one after the other, each reaped by the root, whose own wait4 covers them at the end.
TEST(HwmBound, TreeOfARootAndFiveShortChildren) {
  test::FakeProc proc;
  constexpr pid_t kSelf = 1000;
  ProcTree tree{proc.root(), kSelf};
  TreeAccounting accounting{100.0};
  proc.add(100, kSelf, 10, 10, {.utime = 1, .stime = 0, .hwm_kib = 300 * 1024});
  proc.set_last_pid(100);
  tree.add_root(100);
  tree.refresh();
  accounting.read(tree.members());
  for (pid_t child = 101; child <= 105; ++child) {
    proc.add(child, 100, 11, 10, {.utime = 1, .stime = 0, .hwm_kib = 300 * 1024});  // read right after its fork
    proc.set_last_pid(child);
    tree.refresh();
    accounting.read(tree.members());
    proc.reap(child);  // the root reaps it
    for (Member& m : tree.members()) m.gone = m.pid == child;
    tree.prune([&](const Member& m) { accounting.left(m); });
    accounting.read(tree.members());
  }
  EXPECT_EQ(accounting.totals().uncovered, 5u);
  Member& root = tree.members()[0];
  accounting.before_reap(root);
  rusage usage{};
  usage.ru_maxrss = 310 * 1024;  // KiB: the largest of the root and its reaped children
  accounting.after_reap(root, usage);
  proc.reap(100);
  root.gone = true;
  tree.prune([&](const Member& m) { accounting.left(m); });
  accounting.close(tree.members());
  EXPECT_EQ(accounting.totals().uncovered, 0u);
  // A child's last window: the root as last read (300 MiB) and the child with the root's wait4
  // as its cap (310 MiB); never six processes' worth.
  EXPECT_EQ(accounting.totals().hwm_sum, (300u + 310u) * kMiB);
}

}  // namespace
}  // namespace qprof
