// SPDX-License-Identifier: Apache-2.0
// The GPU sampler allocates nothing in steady state, process queries included (on the calling
// thread or on the helper): counted through the global operator new of this test binary.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "count_allocations.hpp"
#include "gpu_test_util.hpp"
#include "qprof/common/clock.hpp"
#include "qprof/gpu/sampler.hpp"

using qprof::test::g_allocations;

// The counter itself works: otherwise "no allocation" below would prove nothing.
TEST(CountAllocations, SeesAnAllocation) {
  const long before = g_allocations.load();
  // An explicit call: a new-expression paired with its delete may be elided by the compiler.
  void* p = ::operator new(16);
  ::operator delete(p);
  EXPECT_EQ(g_allocations.load() - before, 1);
}

namespace qprof::gpu {
namespace {

void steady_state(bool helper_thread) {
  test::FakeNvmlScript script(
      "device GPU-11111111-2222-3333-4444-555555555555 85899345920 1073741824 NVIDIA H100 80GB HBM3\n"
      "compute 100 268435456\ngraphics 100 1048576\ncompute 999 536870912\n"
      "device GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee 25769803776 536870912 NVIDIA RTX A5000\n"
      "compute 101 1048576\n");
  OpenOptions oo;
  oo.nvml_library = test::fake_nvml();
  auto opened = open_nvml(oo);
  ASSERT_TRUE(opened.ok()) << opened.failure().message;
  auto backend = std::move(*opened);
  SamplerOptions o;
  o.process_thread = helper_thread;
  o.process_interval_ns = 1'000'000;  // a process query every millisecond: many in the count
  o.cpu_budget = 1.0;
  Sampler s(std::move(backend), o);
  test::ScratchDir dir;
  trace::Writer out(dir.file("t.dat"));
  const std::vector<pid_t> tree{100, 101, 102};
  for (int i = 0; i < 50; ++i) {  // warm up: devices written, buffers sized
    s.sample(monotonic_ns(), 1.0 + i, tree, out);
    s.wait_process_query(1'000'000'000);
    usleep(500);
  }
  out.flush();
  const std::uint64_t queries = s.summary().process_queries;
  const long before = g_allocations.load();
  for (int i = 0; i < 1000; ++i) {
    s.sample(monotonic_ns(), 100.0 + i, tree, out);
    if (i % 100 == 0) out.flush();
    usleep(200);
  }
  s.wait_process_query(1'000'000'000);
  const long allocations = g_allocations.load() - before;
  const std::uint64_t during = s.summary().process_queries - queries;
  s.stop();
  EXPECT_EQ(allocations, 0);
  EXPECT_GT(during, 20u) << "process queries ran meanwhile";
}

TEST(GpuSamplerSteadyState, AllocatesNothingWithInlineProcessQueries) { steady_state(false); }
TEST(GpuSamplerSteadyState, AllocatesNothingWithTheHelperThread) { steady_state(true); }

}  // namespace
}  // namespace qprof::gpu
