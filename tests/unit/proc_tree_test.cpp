// SPDX-License-Identifier: Apache-2.0
// Membership over recorded-style /proc trees (a directory the test writes), and over live
// processes for what only the kernel does (descriptors of reaped processes).
#include "qprof/record/proc_tree.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <thread>
#include <vector>

#include "bounded_child.hpp"
#include "fake_proc.hpp"
#include "qprof/record/probes.hpp"
#include "qprof/record/proc_events.hpp"

namespace qprof {
using record::Member;
using record::ProcEvents;
using record::ProcTree;
using record::read_rss;
namespace {

using test::FakeProc;

std::set<pid_t> pids(const ProcTree& t) {
  std::set<pid_t> out;
  for (const Member& m : t.members()) out.insert(m.pid);
  return out;
}

constexpr pid_t kSelf = 1000;

TEST(ProcTree, FindsDescendantsAndOrphansAdoptedByQprof) {
  FakeProc proc;
  proc.add(1, 0, 1);
  proc.add(kSelf, 1, 5);
  proc.add(100, kSelf, 10);
  ProcTree tree(proc.root(), kSelf);
  tree.add_root(100);
  EXPECT_EQ(pids(tree), (std::set<pid_t>{100}));
  proc.add(101, 100, 11);
  proc.add(102, 101, 12);
  proc.add(50, 102, 13);  // PIDs wrapped: a grandchild listed before its parent
  proc.add(200, 1, 14);   // someone else's
  proc.add(201, 200, 15);
  proc.add(300, kSelf, 16);  // a daemon whose parents exited: reparented to qprof
  proc.set_last_pid(300);
  EXPECT_EQ(tree.refresh(), 4u);
  EXPECT_EQ(pids(tree), (std::set<pid_t>{50, 100, 101, 102, 300}));
  EXPECT_TRUE(std::any_of(tree.members().begin(), tree.members().end(),
                          [](const Member& m) { return m.is_root && m.pid == 100; }));
}

TEST(ProcTree, SkipsTheScanWhileNoPidWasAllocated) {
  FakeProc proc;
  proc.add(100, kSelf, 10);
  proc.set_last_pid(100);
  ProcTree tree(proc.root(), kSelf);
  tree.add_root(100);
  tree.refresh();
  const auto scans = tree.scans();
  proc.add(101, 100, 11);  // appears without the kernel's PID counter moving: impossible for real
  EXPECT_EQ(tree.refresh(), 0u);
  EXPECT_EQ(tree.scans(), scans);
  proc.set_last_pid(101);
  EXPECT_EQ(tree.refresh(), 1u);
  EXPECT_EQ(tree.scans(), scans + 1);
}

TEST(ProcTree, AParentPidReusedByAnotherProcessDoesNotAdoptItsChildren) {
  FakeProc proc;
  proc.add(100, kSelf, 10);
  proc.add(101, 100, 11);
  proc.set_last_pid(101);
  ProcTree tree(proc.root(), kSelf);
  tree.add_root(100);
  tree.refresh();
  ASSERT_EQ(pids(tree), (std::set<pid_t>{100, 101}));
  // 101 exits and its PID is taken by an unrelated process (another start time), which forks.
  proc.add(101, 1, 99);
  proc.add(102, 101, 100);
  proc.set_last_pid(102);
  tree.refresh();
  EXPECT_EQ(pids(tree).count(102), 0u);
}

TEST(ProcTree, AKnownOutsiderStaysOutsideAndNewPidsAreClassifiedOnce) {
  FakeProc proc;
  proc.add(100, kSelf, 10);
  proc.add(200, 1, 20);
  proc.set_last_pid(200);
  ProcTree tree(proc.root(), kSelf);
  tree.add_root(100);
  tree.refresh();
  // Were 200 classified again, this (impossible) new parent link would make it a member.
  proc.add(200, 100, 20);
  proc.add(201, 1, 21);
  proc.set_last_pid(201);
  tree.refresh();
  EXPECT_EQ(pids(tree), (std::set<pid_t>{100}));
}

TEST(ProcTree, PrimedOutsidersAreNeverReadAgain) {
  FakeProc proc;
  proc.add(1, 0, 1);
  proc.add(50, 1, 2);
  proc.set_last_pid(50);
  ProcTree tree(proc.root(), kSelf);
  tree.prime();
  // A process that existed before the command cannot descend from it, whatever it now says.
  proc.add(50, kSelf, 2);
  proc.add(100, kSelf, 10);
  proc.add(101, 100, 11);
  tree.add_root(100);
  proc.set_last_pid(101);
  EXPECT_EQ(tree.refresh(), 1u);
  EXPECT_EQ(pids(tree), (std::set<pid_t>{100, 101}));
}

// A tree rooted at 100 whose membership comes from a file the test writes in place of its
// cgroup's cgroup.procs.
struct CgroupTree {
  CgroupTree(const FakeProc& proc, const std::string& text)
      : procs(proc.root() + "/cgroup.procs"), tree(proc.root(), kSelf) {
    write(text);
    tree.add_root(100);
    tree.use_cgroup(procs);
  }
  void write(const std::string& text) const { std::ofstream(procs) << text; }
  std::string procs;
  ProcTree tree;
};

TEST(ProcTree, CgroupMembership) {
  FakeProc proc;
  proc.add(100, kSelf, 10);
  proc.add(555, 1, 11);  // in the cgroup although its parent link says nothing
  CgroupTree g(proc, "100\n555\n");
  EXPECT_EQ(g.tree.refresh(), 1u);
  EXPECT_EQ(pids(g.tree), (std::set<pid_t>{100, 555}));
}

// cgroup.procs is read through a window of fixed size, whole lines at a time: a group of any size
// costs qprof no more memory, and a PID cut at the window's edge is read whole, never as two.
TEST(ProcTree, CgroupMembershipOfAGroupLargerThanTheReadWindow) {
  FakeProc proc;
  proc.add(100, kSelf, 10);
  proc.add(555, 1, 11);
  proc.add(55, 1, 12);  // what "555" would read as, cut after two digits
  proc.add(5, 1, 13);
  proc.add(777, 1, 14);
  std::string text = "100\n";
  // PIDs of no process, then one filler line, so that "555" starts two bytes before the window's end.
  const std::size_t at = ProcTree::kCgroupReadWindow - 2;
  while (text.size() + 6 <= at - 2) text += "99999\n";
  text += std::string(at - text.size() - 1, '9') + "\n";
  ASSERT_EQ(text.size(), at);
  text += "555\n";
  while (text.size() < 3 * ProcTree::kCgroupReadWindow) text += "99999\n";
  CgroupTree g(proc, text + "777");  // the last line without its newline (a file standing in for the kernel's)
  EXPECT_EQ(g.tree.refresh(), 2u);
  EXPECT_EQ(pids(g.tree), (std::set<pid_t>{100, 555, 777}));
  // A process created since: the group is read again, and only the newcomer joins.
  proc.add(779, 1, 15);
  proc.set_last_pid(779);
  g.write(text + "777\n779\n");
  EXPECT_EQ(g.tree.refresh(), 1u);
  EXPECT_EQ(pids(g.tree), (std::set<pid_t>{100, 555, 777, 779}));
  EXPECT_EQ(g.tree.members().size(), 4u) << "members are not added twice";
}

// A file that never ends in place of cgroup.procs (the kernel's always does) is read up to a
// limit, through the same window: in a child under a memory limit of its own and a deadline.
TEST(ProcTree, AnEndlessCgroupProcsIsReadUpToALimit) {
  const int status = test::in_bounded_child([] {
    FakeProc proc;
    proc.add(100, kSelf, 10);
    ProcTree tree(proc.root(), kSelf);
    tree.add_root(100);
    tree.use_cgroup("/dev/zero");
    return tree.refresh() == 0 && tree.members().size() == 1;
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

// Reading cgroup.procs costs the kernel a sort of the group's PIDs: it is read again when the
// newest PID of /proc/loadavg moved (a member forked), or a second after the last read (a
// process moved into the group from outside creates no PID).
TEST(ProcTree, CgroupIsReadAgainWhenAProcessWasCreatedOrASecondPassed) {
  FakeProc proc;
  proc.add(100, kSelf, 10);
  CgroupTree g(proc, "100\n");
  EXPECT_EQ(g.tree.refresh(), 0u);
  proc.add(555, 100, 11);
  g.write("100\n555\n");
  EXPECT_EQ(g.tree.refresh(), 0u) << "no PID created since the last read: not read";
  proc.set_last_pid(555);
  EXPECT_EQ(g.tree.refresh(), 1u);
  proc.add(9000, 1, 12);
  g.write("100\n555\n9000\n");  // moved in from outside: no new PID
  EXPECT_EQ(g.tree.refresh(), 0u);
  usleep(static_cast<useconds_t>(ProcTree::kCgroupRecheckNs / 1000 + 50'000));
  EXPECT_EQ(g.tree.refresh(), 1u) << "read again a second on";
  EXPECT_EQ(pids(g.tree), (std::set<pid_t>{100, 555, 9000}));
}

TEST(ProcTree, ProbesReadRssAndPruneDropsTheGone) {
  FakeProc proc;
  proc.add(100, kSelf, 10, 25);
  ProcTree tree(proc.root(), kSelf);
  tree.add_root(100);
  read_rss(tree.members()[0], 4096);
  EXPECT_EQ(tree.members()[0].rss, 25u * 4096);
  tree.members()[0].gone = true;
  tree.prune();
  EXPECT_TRUE(tree.empty());
}

TEST(ProcTreeLive, FollowsRealForksAndReaps) {
  int go[2];
  ASSERT_EQ(pipe(go), 0);
  const pid_t child = fork();
  if (child == 0) {
    close(go[1]);
    if (fork() == 0) {  // the grandchild waits for the pipe to close
      char c;
      [[maybe_unused]] ssize_t n = read(go[0], &c, 1);
      _exit(0);
    }
    char c;
    [[maybe_unused]] ssize_t n = read(go[0], &c, 1);
    wait(nullptr);
    _exit(0);
  }
  close(go[0]);
  ProcTree tree("/proc", getpid());
  tree.add_root(child);
  for (int i = 0; i < 200 && tree.members().size() < 2; ++i) {
    tree.refresh();
    usleep(5000);
  }
  ASSERT_EQ(tree.members().size(), 2u);
  close(go[1]);
  ASSERT_EQ(waitpid(child, nullptr, 0), child);
  // The kept statm descriptors fail once the processes are reaped: they never show a successor.
  for (int i = 0; i < 200 && !tree.empty(); ++i) {
    for (Member& m : tree.members()) read_rss(m, 4096);
    tree.prune();
    usleep(5000);
  }
  EXPECT_TRUE(tree.empty());
}

// With the process events (root), the tree's cgroup.procs is read again when a member forked,
// not when anyone else did: on a busy machine some process is created at every sample, and the
// read costs the kernel a sort of the group's PIDs. Here a file stands in for cgroup.procs and
// names every process the test makes: a read shows as a process joining.
TEST(ProcTreeLive, CgroupIsReadAgainWhenAMemberForksNotWhenAnOutsiderDoes) {
  if (!ProcEvents().open()) GTEST_SKIP() << "the kernel refused the process-event subscription (needs CAP_NET_ADMIN)";
  int cmd[2], report[2];
  ASSERT_EQ(pipe(cmd), 0);
  ASSERT_EQ(pipe(report), 0);
  const pid_t member = fork();
  if (member == 0) {  // forks one child on 'f'; ends, with it, when the pipe closes
    close(cmd[1]);
    char c;
    while (read(cmd[0], &c, 1) == 1) {
      const pid_t g = fork();
      if (g == 0) {
        while (read(cmd[0], &c, 1) > 0) {
        }
        _exit(0);
      }
      [[maybe_unused]] ssize_t n = write(report[1], &g, sizeof g);
    }
    while (wait(nullptr) > 0) {
    }
    _exit(0);
  }
  close(cmd[0]);
  const pid_t outsider = fork();
  if (outsider == 0) {
    pause();
    _exit(0);
  }
  char dir[] = "/tmp/qprof-cgroup-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string procs = std::string(dir) + "/cgroup.procs";
  const auto write_procs = [&](const std::vector<pid_t>& list) {
    std::ofstream out(procs);
    for (pid_t p : list) out << p << '\n';
  };
  ProcTree tree("/proc", getpid());
  tree.add_root(member);
  write_procs({member});
  tree.use_cgroup(procs);
  EXPECT_EQ(tree.refresh(), 0u) << "the first read";
  // Another process forks (the outsider's own fork happened before; this one is after the read).
  const pid_t other = fork();
  if (other == 0) _exit(0);
  ASSERT_EQ(waitpid(other, nullptr, 0), other);
  write_procs({member, outsider});
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(tree.refresh(), 0u) << "an outsider's fork: cgroup.procs is not read again";
    usleep(2000);
  }
  ASSERT_EQ(write(cmd[1], "f", 1), 1);
  pid_t child = 0;
  ASSERT_EQ(read(report[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
  write_procs({member, outsider, child});
  std::size_t joined = 0;
  for (int i = 0; i < 100 && joined == 0; ++i) {
    joined = tree.refresh();
    if (joined == 0) usleep(1000);
  }
  EXPECT_EQ(joined, 2u) << "a member's fork: read again (the outsider, in the file, joins too)";
  close(cmd[1]);
  kill(outsider, SIGKILL);
  waitpid(outsider, nullptr, 0);
  waitpid(member, nullptr, 0);
  close(report[0]);
  close(report[1]);
  std::filesystem::remove_all(dir);
}

TEST(ProcFileLive, AKeptDescriptorOfAReapedProcessFailsWithEsrch) {
  const pid_t child = fork();
  if (child == 0) {
    pause();
    _exit(0);
  }
  ProcFile statm("/proc/" + std::to_string(child) + "/statm");
  char buf[128];
  EXPECT_GT(statm.read(buf, sizeof buf), 0);
  kill(child, SIGKILL);
  siginfo_t info;
  waitid(P_PID, child, &info, WEXITED | WNOWAIT);  // a zombie: reads zeros
  const ssize_t zombie = statm.read(buf, sizeof buf);
  ASSERT_GT(zombie, 0);
  EXPECT_EQ(std::string(buf, static_cast<std::size_t>(zombie)), "0 0 0 0 0 0 0\n");
  waitpid(child, nullptr, 0);
  errno = 0;
  EXPECT_EQ(statm.read(buf, sizeof buf), -1);
  EXPECT_EQ(errno, ESRCH);
}

// The process-event subscription is one socket however often it is asked for: a second open()
// (a second prime()) keeps it, where it used to leave the first socket subscribed and open.
TEST(ProcEvents, ASecondOpenKeepsTheOneSubscription) {
  const auto open_descriptors = [] {
    return std::distance(std::filesystem::directory_iterator("/proc/self/fd"), std::filesystem::directory_iterator{});
  };
  ProcEvents events;
  if (!events.open()) GTEST_SKIP() << "the kernel refused the process-event subscription (needs CAP_NET_ADMIN)";
  const auto after_first = open_descriptors();
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(events.open());
  EXPECT_TRUE(events.is_open());
  EXPECT_EQ(open_descriptors(), after_first);
  // And a fork is still seen, once.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  int seen = 0;
  for (int attempt = 0; attempt < 100 && seen == 0; ++attempt) {
    events.drain([&](const ProcEvents::Fork& f) { seen += f.child == child ? 1 : 0; });
    if (seen == 0) ::usleep(1000);
  }
  EXPECT_EQ(seen, 1);
}

// Only new processes reach qprof: a process that forks, execs and exits and a thread that starts
// and ends give the kernel five events or more; with the filter, each message received is a
// process's fork, whatever else the machine does meanwhile.
TEST(ProcEvents, OnlyNewProcessesAreQueued) {
  ProcEvents events;
  if (!events.open()) GTEST_SKIP() << "the kernel refused the process-event subscription (needs CAP_NET_ADMIN)";
  ASSERT_TRUE(events.filtered()) << "the socket filter was refused";
  // What the machine's other processes did between the subscription and the filter (an exit
  // under ctest -j2) is queued unfiltered: taken first, so that only the filter is tested.
  events.drain([](const ProcEvents::Fork&) {});
  const std::uint64_t before = events.received();
  std::thread([] {}).join();
  const pid_t child = ::fork();
  if (child == 0) {
    ::execl("/bin/true", "true", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  int forks = 0, seen = 0;
  for (int attempt = 0; attempt < 100 && seen == 0; ++attempt) {
    events.drain([&](const ProcEvents::Fork& f) {
      ++forks;
      seen += f.child == child ? 1 : 0;
    });
    if (seen == 0) ::usleep(1000);
  }
  EXPECT_EQ(seen, 1);
  EXPECT_EQ(events.received() - before, static_cast<std::uint64_t>(forks)) << "a message that is not a process's fork";
}

}  // namespace
}  // namespace qprof
