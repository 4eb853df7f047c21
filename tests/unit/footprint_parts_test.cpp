// SPDX-License-Identifier: Apache-2.0
// The footprint's parts on the cgroup basis when memory.stat was read far from the peak (a long
// --interval: at the start and after the exit only): the unreclaimable part from the PSS passes
// where they saw more, never above the peak, and no page cache "at the peak" from a reading that
// was not near it.
#include <gtest/gtest.h>

#include "qprof/trace/footprint.hpp"
#include "qprof/trace/format.hpp"

namespace qprof {
namespace {

constexpr Bytes kMiB = 1024 * 1024;

trace::Trace sparse_parts() {
  trace::Trace t;
  t.meta.format_version = 1;
  t.meta.start = 100;
  t.mem.push_back({100.0, 4 * kMiB});
  // The charge with its parts at the start and after the exit; the kernel's peak between them.
  t.cgroup.push_back({100.0, 1 * kMiB, 1 * kMiB, kMiB / 2, kMiB / 64, 0});
  t.cgroup.push_back({100.5, kMiB / 2, 104 * kMiB, 0, kMiB / 64, 0});
  t.pss.push_back({100.2, 102 * kMiB, 101 * kMiB, 100 * kMiB});
  return t;
}

TEST(CgroupFootprint, PartsReadFarFromThePeakGiveWayToThePssPasses) {
  const auto f = trace::footprint_of(sparse_parts());
  ASSERT_TRUE(f);
  EXPECT_EQ(f->basis, trace::Footprint::Basis::cgroup);
  EXPECT_EQ(f->peak, 104 * kMiB);
  EXPECT_EQ(f->unreclaimable, 100 * kMiB) << "was the start's 0.5 MiB";
  EXPECT_FALSE(f->reclaimable) << "a page cache read at 1 MiB is not the peak's";

  // Never above the peak: PSS counts a share of pages another cgroup is charged for.
  trace::Trace outside = sparse_parts();
  outside.pss.back().unreclaimable = 150 * kMiB;
  EXPECT_EQ(trace::footprint_of(outside)->unreclaimable, 104 * kMiB);
  // Parts read near the peak stand, with their page cache.
  trace::Trace near = sparse_parts();
  near.cgroup.push_back({100.3, 100 * kMiB, 104 * kMiB, 90 * kMiB, 10 * kMiB, 0});
  EXPECT_EQ(trace::footprint_of(near)->unreclaimable, 100 * kMiB);
  EXPECT_EQ(trace::footprint_of(near)->reclaimable, 10 * kMiB);
  EXPECT_EQ(trace::cgroup_unreclaimable(std::nullopt, std::nullopt, 5), std::nullopt);
  EXPECT_EQ(trace::cgroup_unreclaimable(3, std::nullopt, 5), 3u);
}

}  // namespace
}  // namespace qprof
