// SPDX-License-Identifier: Apache-2.0
// The sampler allocates nothing in steady state: counted through the global operator new of
// this test binary (it has its own executable for that reason).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <new>

#include "count_allocations.hpp"
#include "qprof/common/clock.hpp"
#include "qprof/trace/format.hpp"
#include "qprof/record/proc_tree.hpp"
#include "qprof/record/sampler.hpp"

using qprof::test::g_allocations;

// The counter itself works: otherwise "no allocation" below would prove nothing.
TEST(CountAllocations, SeesAnAllocation) {
  const long before = g_allocations.load();
  // An explicit call: a new-expression paired with its delete may be elided by the compiler.
  void* p = ::operator new(16);
  ::operator delete(p);
  EXPECT_EQ(g_allocations.load() - before, 1);
}

namespace qprof {
using record::ProcTree;
using record::Sampler;
using record::SamplerConfig;
namespace {

// Outside the tree (double-forked, so not our child), processes keep being born and dying:
// the scan must classify them without allocating either.
pid_t start_outsider_churn() {
  int ready[2];
  if (pipe(ready) != 0) return -1;
  const pid_t middle = fork();
  if (middle == 0) {
    setsid();
    const pid_t churner = fork();
    if (churner == 0) {
      for (int i = 0; i < 2000; ++i) {
        const pid_t p = fork();
        if (p == 0) _exit(0);
        waitpid(p, nullptr, 0);
        usleep(500);
      }
      _exit(0);
    }
    [[maybe_unused]] ssize_t w = write(ready[1], &churner, sizeof churner);
    _exit(0);
  }
  waitpid(middle, nullptr, 0);
  pid_t churner = -1;
  [[maybe_unused]] ssize_t r = read(ready[0], &churner, sizeof churner);
  close(ready[0]);
  close(ready[1]);
  return churner;
}

// `with_events`: membership from the kernel's process events (primed before the fork, as
// `qprof run` does); otherwise from the /proc scan.
void expect_allocation_free_steady_state(bool with_events) {
  std::unique_ptr<ProcTree> primed;
  if (with_events) {
    primed = std::make_unique<ProcTree>("/proc", getpid());
    primed->prime();
    if (!primed->uses_events())
      GTEST_SKIP() << "no process events here (needs CAP_NET_ADMIN in the initial namespaces)";
  }
  const pid_t child = fork();
  if (child == 0) {
    setpgid(0, 0);  // one group, killed at once at the end
    if (fork() == 0) pause();
    pause();
    _exit(0);
  }
  const std::string path =
      std::filesystem::temp_directory_path() / ("qprof-alloc-" + std::to_string(getpid()) + ".dat");
  {
    trace::Writer out(path);
    WallAnchor clock;
    ProcTree scanned("/proc", getpid());
    ProcTree& tree = with_events ? *primed : scanned;
    tree.add_root(child);
    SamplerConfig config;
    config.multiprocess = true;
    Sampler sampler(tree, out, clock, config);
    // Warm up until both processes are known; the writer's buffer and the scan lists are sized.
    for (int i = 0; i < 200 && tree.members().size() < 2; ++i) {
      sampler.sample(monotonic_ns());
      usleep(2000);
    }
    ASSERT_EQ(tree.members().size(), 2u);
    // Past a member's joining work: its name is read again up to 100 samples after it joined
    // (an exec after the join), which allocates as the join does.
    for (int i = 0; i < 150; ++i) sampler.sample(monotonic_ns());
    out.flush();
    const pid_t churner = start_outsider_churn();
    ASSERT_GT(churner, 0);
    const std::uint64_t scans_before = tree.scans();
    const long before = g_allocations.load();
    for (int i = 0; i < 1000; ++i) {
      ASSERT_TRUE(sampler.sample(monotonic_ns()));
      if (i % 100 == 0) out.flush();
      usleep(200);
    }
    EXPECT_EQ(g_allocations.load() - before, 0);
    if (with_events) {
      EXPECT_EQ(tree.scans(), scans_before) << "the events tell newcomers: no /proc scan";
    } else {
      EXPECT_GT(tree.scans(), scans_before + 10) << "the churn should have made the tree rescan /proc";
    }
    EXPECT_EQ(tree.members().size(), 2u);
    kill(churner, SIGKILL);
  }
  kill(-child, SIGKILL);
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  std::filesystem::remove(path);
}

TEST(SamplerSteadyState, AllocatesNothingPerSample) { expect_allocation_free_steady_state(false); }

TEST(SamplerSteadyState, AllocatesNothingPerSampleWithProcessEvents) { expect_allocation_free_steady_state(true); }

}  // namespace
}  // namespace qprof
