// SPDX-License-Identifier: Apache-2.0
// CPU of the tree: two busy children. Its own binary, run alone (RUN_SERIAL): it keeps both
// cores of a CI machine busy, which would disturb the timing of other tests.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using trace::CpuSample;
using trace::Trace;

namespace {

TEST(RunAccounting, CpuOfTwoBusyChildrenMatchesTheKernelsCount) {
  const std::string out = temp_dir() + "/burn.dat";
  const Result r = qprof({"run", "-v", "-o", out, "--", workload("burn"), "1500", "2"});
  ASSERT_EQ(r.status, 0) << r.err;
  double kernel_cpu = 0, wall = 0;
  ASSERT_EQ(std::sscanf(r.out.c_str(), "cpu_seconds %lf wall_seconds %lf", &kernel_cpu, &wall), 2) << r.out;
  const Trace t = trace::read_trace(out);
  ASSERT_GE(t.cpu.size(), 10u);
  // The children are gone by the end; their time is in the tree's total all the same.
  EXPECT_NEAR(t.cpu.back().cpu_seconds, kernel_cpu, 0.05 * kernel_cpu + 0.05);
  // Over the busy second, the tree used as many cores as the kernel says it got: ≈ 200 % on an
  // idle machine with two cores.
  const double kernel_percent = 100.0 * kernel_cpu / wall;
  const double t0 = t.cpu.front().t;
  double busiest = 0;
  for (std::size_t i = 1; i < t.cpu.size(); ++i) {
    const CpuSample& a = t.cpu[i - 1];
    const CpuSample& b = t.cpu[i];
    if (b.t - t0 > 0.2 && b.t - t0 < wall - 0.2 && b.t - a.t > 0.05) {
      busiest = std::max(busiest, 100.0 * (b.cpu_seconds - a.cpu_seconds) / (b.t - a.t));
    }
  }
  // The busiest interval is at least the average; it cannot exceed the machine's cores (plus
  // the 10 ms tick granularity of /proc's CPU times, per child).
  EXPECT_GT(busiest, 0.8 * kernel_percent);
  EXPECT_LT(busiest, 100.0 * static_cast<double>(sysconf(_SC_NPROCESSORS_ONLN)) + 25.0);
  RecordProperty("kernel_percent", static_cast<int>(kernel_percent));
  RecordProperty("busiest_percent", static_cast<int>(busiest));
  EXPECT_NE(r.err.find("s of CPU"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace qprof::test
