// SPDX-License-Identifier: Apache-2.0
// The tree's cgroup, on the hierarchies this machine has (needs root; skipped otherwise).
#include "qprof/record/cgroup.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "../support/own_cgroup.hpp"
#include "bounded_child.hpp"

namespace qprof {
using record::cgroup_procs_pids;
using record::MemoryCgroupDir;
using record::move_self_to_leaf;
using record::oom_kills_in;
using record::own_memory_cgroup;
using record::split_proc_cgroup_line;
using record::TreeCgroup;
namespace {

namespace fs = std::filesystem;
using test::own_v1_memory_group;

std::string mountinfo_with(const std::string& line) {
  const std::string path = (fs::temp_directory_path() / ("qprof-mountinfo-" + std::to_string(getpid()))).string();
  std::ofstream(path) << line << "\n";
  return path;
}

// cgroup.procs is read up to a bound (64 KiB, 8192 PIDs of 7 digits): a PID cut there would move
// another process, so a last line without its newline is left for the next round.
TEST(CgroupProcs, OnlyWholeLinesArePids) {
  EXPECT_EQ(cgroup_procs_pids("12\n345\n67"), (std::vector<pid_t>{12, 345})) << "67 is the start of 67xxx";
  EXPECT_EQ(cgroup_procs_pids("12\n345\n"), (std::vector<pid_t>{12, 345}));
  EXPECT_TRUE(cgroup_procs_pids("").empty());
  EXPECT_TRUE(cgroup_procs_pids("4194303").empty());
  EXPECT_EQ(cgroup_procs_pids("x\n0\n-3\n5 \n7\n"), (std::vector<pid_t>{7})) << "no line of another form";
}

TEST(TreeCgroup, CgroupV2WithoutMemoryControllerGivesMembershipOnly) {
  if (geteuid() != 0 || !fs::exists("/sys/fs/cgroup/unified/cgroup.procs")) {
    GTEST_SKIP() << "needs root and a cgroup v2 hierarchy at /sys/fs/cgroup/unified";
  }
  const std::string info = mountinfo_with(
      "40 30 0:35 / /sys/fs/cgroup/unified rw,nosuid,nodev,noexec,relatime shared:10 - cgroup2 cgroup2 rw");
  std::string dir;
  {
    auto created = TreeCgroup::create(info);
    ASSERT_TRUE(created) << created.failure().message;
    auto cg = std::move(*created);
    EXPECT_FALSE(cg->is_v1());
    dir = cg->path();
    EXPECT_TRUE(fs::exists(cg->procs_path()));
    // Whether the memory controller could be enabled decides between figures and membership only.
    EXPECT_EQ(cg->has_memory(), fs::exists(dir + "/memory.current"));
    if (!cg->has_memory()) {
      EXPECT_FALSE(cg->usage());
      EXPECT_FALSE(cg->peak());
    }
  }
  EXPECT_FALSE(fs::exists(dir)) << "the cgroup is removed";
  fs::remove(info);
}

TEST(TreeCgroup, CgroupV1MemoryGivesUsageAndPeak) {
  if (geteuid() != 0 || !fs::exists("/sys/fs/cgroup/memory/cgroup.procs")) {
    GTEST_SKIP() << "needs root and a cgroup v1 memory hierarchy";
  }
  std::string dir;
  {
    auto created = TreeCgroup::create();
    ASSERT_TRUE(created) << created.failure().message;
    auto cg = std::move(*created);
    EXPECT_TRUE(cg->is_v1());
    EXPECT_TRUE(cg->has_memory());
    EXPECT_TRUE(cg->usage().has_value());
    EXPECT_TRUE(cg->peak().has_value());
    dir = cg->path();
  }
  EXPECT_FALSE(fs::exists(dir));
}

// A stage's exact peak: the kernel's counter read and reset at each checkpoint. A child in the
// group touches 64 MiB and frees it before the first window closes; the second window, in which
// it held nothing, must not carry that peak, while the run's peak keeps it.
TEST(TreeCgroup, AWindowClosedAtACheckpointHoldsOnlyItsOwnPeak) {
  if (geteuid() != 0 || !fs::exists("/sys/fs/cgroup/memory/cgroup.procs")) {
    GTEST_SKIP() << "needs root and a cgroup v1 memory hierarchy";
  }
  auto created = TreeCgroup::create();
  ASSERT_TRUE(created) << created.failure().message;
  auto cg = std::move(*created);
  int done[2], go_on[2];
  ASSERT_EQ(pipe(done), 0);
  ASSERT_EQ(pipe(go_on), 0);
  const pid_t child = fork();
  if (child == 0) {
    close(go_on[1]);
    std::ofstream(cg->procs_path()) << getpid() << "\n";
    constexpr std::size_t kSize = std::size_t{64} << 20;
    char* p = static_cast<char*>(mmap(nullptr, kSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    for (std::size_t i = 0; i < kSize; i += 4096) p[i] = 1;
    munmap(p, kSize);
    char c = 'x';
    if (write(done[1], &c, 1) != 1) _exit(3);
    if (read(go_on[0], &c, 1) < 0) _exit(4);  // held in the group, 64 MiB freed, until told
    _exit(0);
  }
  close(go_on[0]);
  char c;
  ASSERT_EQ(read(done[0], &c, 1), 1);
  const auto first = cg->close_window();
  ASSERT_TRUE(first) << "cgroup v1 lets root reset memory.max_usage_in_bytes";
  EXPECT_GE(*first, std::size_t{64} << 20);
  const auto second = cg->close_window();
  ASSERT_TRUE(second);
  EXPECT_LT(*second, std::size_t{16} << 20) << "the 64 MiB was freed before this window opened";
  EXPECT_GE(*cg->peak(), std::size_t{64} << 20) << "the run's peak keeps every window's";
  close(go_on[1]);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

// The cgroup v1 memory path of this process, "" if none.
TEST(TreeCgroup, NestsUnderItsOwnCgroupAndRemovesGroupsOfDeadQprofs) {
  const std::string own = own_v1_memory_group();
  if (geteuid() != 0 || own.empty() || !fs::exists("/sys/fs/cgroup/memory/cgroup.procs")) {
    GTEST_SKIP() << "needs root and a cgroup v1 memory hierarchy";
  }
  // A group standing for "qprof's own cgroup", below the real one, and a group of a qprof that
  // died: a PID that was just reaped.
  const std::string rel = (own == "/" ? "" : own) + "/qprof-unit-" + std::to_string(getpid());
  const std::string parent = "/sys/fs/cgroup/memory" + rel;
  ASSERT_TRUE(fs::create_directory(parent)) << parent;
  const pid_t dead = fork();
  if (dead == 0) _exit(0);
  ASSERT_GT(dead, 0);
  waitpid(dead, nullptr, 0);
  const std::string stale = parent + "/qprof-" + std::to_string(dead);
  ASSERT_TRUE(fs::create_directory(stale));
  const std::string proc_cgroup = mountinfo_with("4:memory:" + rel);
  std::string dir;
  {
    auto created = TreeCgroup::create("/proc/self/mountinfo", proc_cgroup);
    ASSERT_TRUE(created) << created.failure().message;
    auto cg = std::move(*created);
    dir = cg->path();
    EXPECT_EQ(dir, parent + "/qprof-" + std::to_string(getpid()));
    EXPECT_FALSE(fs::exists(stale)) << "the group of a dead qprof is removed";
  }
  EXPECT_FALSE(fs::exists(dir));
  fs::remove(proc_cgroup);
  rmdir(parent.c_str());
}

// move_self_to_leaf on the machine's cgroup v2 hierarchy: a child alone in a fresh group moves
// itself into its leaf; with a second process in the group nothing moves.
TEST(TreeCgroup, AloneInItsGroupQprofMovesItselfIntoALeaf) {
  const std::string root = "/sys/fs/cgroup/unified";
  if (geteuid() != 0 || !fs::exists(root + "/cgroup.procs")) {
    GTEST_SKIP() << "needs root and a cgroup v2 hierarchy at " << root;
  }
  const std::string group = root + "/qprof-unit-leaf-" + std::to_string(getpid());
  ASSERT_TRUE(fs::create_directory(group)) << group;
  const auto in_child = [&](bool with_company) {
    const pid_t child = fork();
    if (child == 0) {
      std::ofstream(group + "/cgroup.procs") << getpid() << std::flush;
      pid_t company = 0;
      if (with_company) {
        company = fork();  // born in the group: not alone any more
        if (company == 0) {
          pause();
          _exit(0);
        }
      }
      const bool moved = move_self_to_leaf(group);
      std::ifstream own("/proc/self/cgroup");
      const std::string text((std::istreambuf_iterator<char>(own)), {});
      const bool in_leaf =
          text.find("0::/" + fs::path(group).filename().string() + "/qprof-self\n") != std::string::npos;
      if (company > 0) kill(company, SIGKILL), waitpid(company, nullptr, 0);
      _exit(moved && in_leaf ? 0 : !moved && !in_leaf ? 1 : 2);
    }
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(in_child(true), 1) << "another process in the group: nothing moves";
  EXPECT_EQ(in_child(false), 0) << "alone: moved into " << group << "/qprof-self";
  rmdir((group + "/qprof-self").c_str());
  EXPECT_EQ(rmdir(group.c_str()), 0) << "every process left the group";
}

TEST(TreeCgroup, NoHierarchySaysWhy) {
  const std::string info = mountinfo_with("20 1 0:19 / /proc rw,nosuid - proc proc rw");
  const auto created = TreeCgroup::create(info);
  ASSERT_FALSE(created);
  EXPECT_EQ(created.failure().message, "no cgroup v1 memory or cgroup v2 hierarchy is mounted");
  fs::remove(info);
}

TEST(ProcCgroupLine, IdControllersAndAPathThatMayHoldColons) {
  auto l = split_proc_cgroup_line("4:memory:/a/b");
  ASSERT_TRUE(l);
  EXPECT_EQ(l->id, "4");
  EXPECT_EQ(l->controllers, "memory");
  EXPECT_EQ(l->path, "/a/b");
  l = split_proc_cgroup_line("0::/pod/c1/step:1");
  ASSERT_TRUE(l);
  EXPECT_EQ(l->id, "0");
  EXPECT_EQ(l->controllers, "");
  EXPECT_EQ(l->path, "/pod/c1/step:1");
  l = split_proc_cgroup_line("12:cpu,cpuacct:/");
  ASSERT_TRUE(l);
  EXPECT_EQ(l->controllers, "cpu,cpuacct");
  EXPECT_FALSE(split_proc_cgroup_line("4:memory"));
  EXPECT_FALSE(split_proc_cgroup_line(""));
}

// qprof's own memory cgroup, found from a mount table and a /proc/self/cgroup of the test's making
// (no root needed: the hierarchy is a folder with the files the kernel would have).
class OwnMemoryCgroup : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("qprof-own-cgroup-" + std::to_string(getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file(const std::string& name, const std::string& text) {
    const fs::path path = dir_ / name;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
    return path.string();
  }
  fs::path dir_;
};

// What the search found, whole: the folder, the version, the count found with it (the one at the
// start) and the count read there again.
void expect_found(const std::optional<MemoryCgroupDir>& own, const std::string& dir, bool v1, std::uint64_t kills) {
  ASSERT_TRUE(own);
  EXPECT_EQ(own->dir, dir);
  EXPECT_EQ(own->v1, v1);
  EXPECT_EQ(own->oom_kills, kills) << "the count at the start comes with the search";
  EXPECT_EQ(oom_kills_in(own->dir, own->v1), kills);
}

TEST_F(OwnMemoryCgroup, V1MemoryHierarchyAmongOthers) {
  const std::string root = (dir_ / "memory").string();
  file("memory/job/step/memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n");
  const std::string info = file("mountinfo",
                                "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
                                "30 25 0:26 / " +
                                    (dir_ / "cpu").string() +
                                    " rw,nosuid shared:9 - cgroup cgroup rw,cpu,cpuacct\n"
                                    "31 25 0:27 / " +
                                    root + " rw,nosuid,nodev shared:10 master:2 - cgroup cgroup rw,memory\n");
  const std::string self = file("cgroup", "5:cpu,cpuacct:/other\n4:memory:/job/step\n0::/\n");
  expect_found(own_memory_cgroup(info, self), root + "/job/step", true, 3);
}

TEST_F(OwnMemoryCgroup, V2InANamespaceWhoseMountRootIsItsOwnGroup) {
  // In a container the hierarchy is mounted from the container's group: the path qprof sees in
  // /proc/self/cgroup is below that root, and a colon in a group's name is part of the path.
  const std::string point = (dir_ / "unified").string();
  file("unified/step:1/memory.events", "low 0\nhigh 0\nmax 0\noom 2\noom_kill 7\n");
  const std::string info =
      file("mountinfo", "40 30 0:35 /pod/c1 " + point + " rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n");
  const std::string self = file("cgroup", "0::/pod/c1/step:1\n");
  expect_found(own_memory_cgroup(info, self), point + "/step:1", false, 7);
}

TEST_F(OwnMemoryCgroup, NoneWhereTheGroupIsOutsideTheMountOrHasNoCount) {
  const std::string point = (dir_ / "unified").string();
  file("unified/memory.events", "oom_kill 1\n");
  const std::string info = file("mountinfo", "40 30 0:35 /pod/c1 " + point + " rw - cgroup2 cgroup2 rw\n");
  // Outside the mounted part of the hierarchy ("/pod/c10" is not below "/pod/c1").
  EXPECT_FALSE(own_memory_cgroup(info, file("outside", "0::/pod/c10\n")));
  // Inside, but the kernel gives no count there.
  EXPECT_FALSE(own_memory_cgroup(info, file("nocount", "0::/pod/c1/x\n")));
  // A table that cannot be read.
  EXPECT_FALSE(own_memory_cgroup((dir_ / "missing").string(), file("self", "0::/pod/c1\n")));
  EXPECT_TRUE(own_memory_cgroup(info, file("self", "0::/pod/c1\n")));
}

// The mount table and /proc/self/cgroup are read up to a bound: an endless file (/dev/zero in
// their place) is cut there, in a child under a memory limit of its own and a deadline.
TEST_F(OwnMemoryCgroup, EndlessTablesAreReadUpToABound) {
  const int status = test::in_bounded_child([&] {
    return !own_memory_cgroup("/dev/zero", "/dev/zero") && !own_memory_cgroup("/dev/zero", file("self", "0::/\n")) &&
           !own_memory_cgroup(file("mountinfo", "40 30 0:35 / /x rw - cgroup2 cgroup2 rw\n"), "/dev/zero");
  });
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

}  // namespace
}  // namespace qprof
