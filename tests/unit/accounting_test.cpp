// The tree's cumulative CPU and I/O across reaps, over a synthetic /proc.
#include "qprof/record/accounting.hpp"

#include <gtest/gtest.h>

#include "fake_proc.hpp"

namespace qprof {
namespace {

using test::FakeProc;
constexpr pid_t kSelf = 1000;

struct Tree {
  FakeProc proc;
  ProcTree tree{proc.root(), kSelf};
  TreeAccounting accounting{100.0};
};

TEST(TreeAccounting, SumsMembersAndKeepsAReapedChildsShareInItsParent) {
  Tree t;
  FakeProc::Counters root{.utime = 10, .stime = 5, .write_bytes = 1000, .wchar = 1200, .hwm_kib = 2048};
  FakeProc::Counters child{.utime = 20, .stime = 0, .write_bytes = 500, .wchar = 600, .hwm_kib = 4096};
  t.proc.add(100, kSelf, 10, 10, root);
  t.proc.add(101, 100, 11, 10, child);
  t.proc.set_last_pid(101);
  t.tree.add_root(100);
  t.tree.refresh();
  ASSERT_EQ(t.tree.members().size(), 2u);
  auto totals = t.accounting.read(t.tree.members());
  EXPECT_DOUBLE_EQ(totals.cpu_seconds, 0.35);
  EXPECT_EQ(totals.io.write_bytes, 1500u);
  EXPECT_EQ(totals.io.wchar, 1800u);
  EXPECT_EQ(totals.hwm_sum, 6144u * 1024);

  // The root reaps the child: the child's time and I/O move into the root's counters.
  t.proc.reap(101);
  root.cutime = 20;
  root.write_bytes = 1500;
  root.wchar = 1800;
  t.proc.set_counters(100, kSelf, 10, root);
  for (Member& m : t.tree.members()) m.gone = m.pid == 101;
  t.tree.prune([&](const Member& m) { t.accounting.left(m); });
  totals = t.accounting.read(t.tree.members());
  EXPECT_DOUBLE_EQ(totals.cpu_seconds, 0.35);
  EXPECT_EQ(totals.io.write_bytes, 1500u);
  EXPECT_EQ(totals.hwm_sum, 6144u * 1024) << "the child's high-water mark stays in the sum";
}

TEST(TreeAccounting, TotalsNeverDecreaseWhenAReapRacesTheReads) {
  Tree t;
  t.proc.add(100, kSelf, 10, 10, {.utime = 10, .stime = 0, .write_bytes = 1000});
  t.proc.add(101, 100, 11, 10, {.utime = 20, .stime = 0, .write_bytes = 500});
  t.proc.set_last_pid(101);
  t.tree.add_root(100);
  t.tree.refresh();
  t.accounting.read(t.tree.members());
  // The child is gone but the parent's counters do not show it yet (read before the reap).
  t.proc.reap(101);
  const auto totals = t.accounting.read(t.tree.members());
  EXPECT_EQ(totals.io.write_bytes, 1500u);
  EXPECT_DOUBLE_EQ(totals.cpu_seconds, 0.30);
}

TEST(TreeAccounting, WhatQprofReapsIsKeptFromTheZombieAndWait4) {
  Tree t;
  t.proc.add(100, kSelf, 10, 10, {.utime = 10, .stime = 0, .write_bytes = 4096, .hwm_kib = 1024});
  t.proc.add(200, kSelf, 12, 10, {.utime = 1, .stime = 0, .write_bytes = 100, .hwm_kib = 512});  // an adopted orphan
  t.proc.set_last_pid(200);
  t.tree.add_root(100);
  t.tree.refresh();
  ASSERT_EQ(t.tree.members().size(), 2u);
  t.accounting.read(t.tree.members());
  // The orphan exits after writing more; qprof reads the zombie, then reaps it.
  t.proc.set_counters(200, kSelf, 12, {.utime = 5, .stime = 0, .write_bytes = 8192, .hwm_kib = 512});
  Member& orphan = t.tree.members()[1];
  t.accounting.before_reap(orphan);
  rusage usage{};
  usage.ru_utime.tv_sec = 0;
  usage.ru_utime.tv_usec = 70000;  // exact: 0.07 s
  usage.ru_maxrss = 3000;          // KiB: it grew after the last VmHWM read
  t.accounting.after_reap(orphan, usage);
  t.proc.reap(200);
  orphan.gone = true;
  t.tree.prune([&](const Member& m) { t.accounting.left(m); });
  const auto totals = t.accounting.read(t.tree.members());
  EXPECT_EQ(totals.io.write_bytes, 4096u + 8192u);
  EXPECT_DOUBLE_EQ(totals.cpu_seconds, 0.10 + 0.07);
  EXPECT_EQ(totals.hwm_sum, (1024u + 3000u) * 1024);
}

TEST(TreeAccounting, AProcessReapedBeforeItWasSeenStillCounts) {
  TreeAccounting accounting(100.0);
  rusage usage{};
  usage.ru_stime.tv_sec = 1;
  usage.ru_maxrss = 2048;
  accounting.reaped_unseen(IoSample{0, 10, 20, 30, 40}, usage);
  std::vector<Member> none;
  const auto totals = accounting.read(none);
  EXPECT_DOUBLE_EQ(totals.cpu_seconds, 1.0);
  EXPECT_EQ(totals.io.write_bytes, 20u);
  EXPECT_EQ(totals.hwm_sum, 2048u * 1024);
}

}  // namespace
}  // namespace qprof
