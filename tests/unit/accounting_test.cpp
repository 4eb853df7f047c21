// SPDX-License-Identifier: Apache-2.0
// The tree's cumulative CPU and I/O across reaps, over a synthetic /proc.
#include "qprof/record/accounting.hpp"

#include <unistd.h>

#include <gtest/gtest.h>

#include <optional>

#include "fake_proc.hpp"

namespace qprof {
using record::Member;
using record::ProcTree;
using record::TreeAccounting;
using trace::IoSample;

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

// A child its own parent reaped is gone before qprof can ask the kernel. Its growth after the
// last reading is covered by the parent's wait4 figure (RUSAGE_CHILDREN) once qprof reaps the
// parent; until then it is uncovered, and Σ VmHWM is not a bound.
TEST(TreeAccounting, AChildReapedByItsParentIsCoveredByTheParentsWait4) {
  Tree t;
  t.proc.add(100, kSelf, 10, 10, {.utime = 1, .stime = 0, .hwm_kib = 1024});
  t.proc.add(101, 100, 11, 10, {.utime = 1, .stime = 0, .hwm_kib = 2048});
  t.proc.set_last_pid(101);
  t.tree.add_root(100);
  t.tree.refresh();
  ASSERT_EQ(t.tree.members().size(), 2u);
  EXPECT_EQ(t.tree.members()[1].ppid, 100);
  t.accounting.read(t.tree.members());
  // The child grows to 5000 KiB after its last reading; the root reaps it.
  t.proc.reap(101);
  t.tree.members()[1].gone = true;
  t.tree.prune([&](const Member& m) { t.accounting.left(m); });
  auto totals = t.accounting.read(t.tree.members());
  EXPECT_EQ(totals.uncovered, 1u);
  EXPECT_EQ(totals.hwm_sum, (1024u + 2048u) * 1024);
  // qprof reaps the root: its ru_maxrss (the largest of itself and its reaped children) covers
  // the child too, and counts for the root itself.
  Member& root = t.tree.members()[0];
  t.accounting.before_reap(root);
  rusage usage{};
  usage.ru_maxrss = 5000;
  t.accounting.after_reap(root, usage);
  t.proc.reap(100);
  root.gone = true;
  t.tree.prune([&](const Member& m) { t.accounting.left(m); });
  std::vector<Member> none;
  totals = t.accounting.read(none);
  EXPECT_EQ(totals.uncovered, 0u);
  EXPECT_EQ(totals.capped, 1u);
  // The child counts with the cap in the window it left in, beside the root as read then; the
  // root counts with its own ru_maxrss in the windows after its last reading, alone.
  EXPECT_EQ(totals.hwm_sum, (1024u + 5000u) * 1024);
}

// A process that reaps its children: wait4's ru_maxrss is the larger of its own peak and theirs
// (RUSAGE_BOTH). A `sh -c` wrapper around a 100 000 KiB job, or a parent that forks one and
// waits, must not count the child's peak as its own as well. The tree: a 2048 KiB root (read
// with 50 faults) and a child read at `child_kib`; the child leaves (the root reaps it), then qprof
// reaps the root, whose zombie shows `zombie_faults` (none: it cannot be read) and whose wait4
// figure is `maxrss_kib`.
Bytes bound_after_a_reaper_exits(std::uint64_t child_kib, std::optional<std::uint64_t> zombie_faults, long maxrss_kib) {
  Tree t;
  const FakeProc::Counters root{.hwm_kib = 2048, .minflt = 50};
  t.proc.add(100, kSelf, 10, 10, root);
  t.proc.add(101, 100, 11, 10, {.hwm_kib = child_kib});
  t.proc.set_last_pid(101);
  t.tree.add_root(100);
  t.tree.refresh();
  t.accounting.read(t.tree.members());
  t.proc.reap(101);
  FakeProc::Counters exited = root;
  exited.minflt = zombie_faults.value_or(0);
  t.proc.zombie(100, kSelf, 10, exited);
  // qprof's order: the reaped child leaves, then the zombie is read, then reaped.
  for (Member& m : t.tree.members()) m.gone = m.pid == 101;
  t.tree.prune([&](const Member& m) { t.accounting.left(m); });
  if (!zombie_faults) t.proc.reap(100);  // its files no longer read
  Member& reaper = t.tree.members()[0];
  t.accounting.before_reap(reaper);
  rusage usage{};
  usage.ru_maxrss = maxrss_kib;
  t.accounting.after_reap(reaper, usage);
  t.proc.reap(100);
  reaper.gone = true;
  t.tree.prune([&](const Member& m) { t.accounting.left(m); });
  std::vector<Member> none;
  const auto totals = t.accounting.read(none);
  EXPECT_EQ(totals.uncovered, 0u);
  return totals.hwm_sum;
}

TEST(TreeAccounting, AReaperThatDidNotFaultSinceItsReadingCountsItsChildOnce) {
  // No fault since its reading: it did not grow, and the kernel's figure is the child's.
  EXPECT_EQ(bound_after_a_reaper_exits(100000, 50, 100000), (2048u + 100000u) * 1024);
}

TEST(TreeAccounting, AReaperThatFaultedCountsAPageAFaultWhenTheFigureIsItsChilds) {
  // 100 faults since its reading (its teardown): a page each on top of its reading, not the
  // child's peak a second time.
  const Bytes page = static_cast<Bytes>(::sysconf(_SC_PAGESIZE));
  EXPECT_EQ(bound_after_a_reaper_exits(100000, 150, 100000), (2048u + 100000u) * 1024 + 100 * page);
}

TEST(TreeAccounting, AReaperThatFaultedKeepsAFigureAboveEveryChildsReading) {
  // The figure is above the child's reading: the reaper may have grown to it after its reading,
  // or the child after its own. Both count with it: loose, never too low.
  EXPECT_EQ(bound_after_a_reaper_exits(50000, 150, 100000), (100000u + 100000u) * 1024);
  // Without a fault the reaper did not grow: the figure is the child's late growth.
  EXPECT_EQ(bound_after_a_reaper_exits(50000, 50, 100000), (2048u + 100000u) * 1024);
}

TEST(TreeAccounting, AReaperWhoseZombieCannotBeReadKeepsTheKernelsFigure) {
  // Nothing says it did not grow.
  EXPECT_EQ(bound_after_a_reaper_exits(100000, std::nullopt, 100000), (100000u + 100000u) * 1024);
}

}  // namespace
}  // namespace qprof

namespace qprof {
namespace {

// A shell that ran 100 000 short commands and reaped each itself, one of which left a child of
// its own: all wait for the shell's wait4, and one cap covers them all, down the tree, at once
// (they are found by their parent's PID, not by a scan of every waiting process per cap).
TEST(TreeAccounting, OneCapCoversAHundredThousandChildrenAndTheirChildren) {
  TreeAccounting accounting(100.0);
  std::vector<Member> none;
  accounting.read(none);
  constexpr Bytes kMiB = Bytes{1} << 20;
  constexpr int kChildren = 100000;
  for (int i = 0; i < kChildren; ++i) {
    Member child;
    child.pid = 1000 + i;
    child.ppid = 100;
    child.hwm = 2 * kMiB;
    accounting.left(child);
  }
  Member grandchild;
  grandchild.pid = 900000;
  grandchild.ppid = 1000;
  grandchild.hwm = kMiB;
  accounting.left(grandchild);
  EXPECT_EQ(accounting.totals().uncovered, static_cast<std::size_t>(kChildren) + 1);

  Member shell;
  shell.pid = 100;
  shell.ppid = 1;
  shell.hwm = kMiB;
  rusage usage{};
  usage.ru_maxrss = 3 * 1024;  // KiB
  accounting.after_reap(shell, usage);
  EXPECT_EQ(accounting.totals().uncovered, 0u);
  EXPECT_EQ(accounting.totals().capped, static_cast<std::size_t>(kChildren) + 1) << "each above its own reading";
  accounting.left(shell);
  accounting.close(none);
  // Never read, they all count in the first two windows, each with the shell's figure.
  EXPECT_GE(accounting.totals().hwm_sum, (kChildren + 1) * 3 * kMiB);
}

}  // namespace
}  // namespace qprof
