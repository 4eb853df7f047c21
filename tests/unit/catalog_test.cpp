// SPDX-License-Identifier: Apache-2.0
// Which files qprof list and qprof clean may touch: default names only, ranks' names included.
#include "qprof/analysis/catalog.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <ctime>

namespace qprof {
using analysis::is_default_trace_name;
using analysis::name_start_time;
namespace {

TEST(Catalog, DefaultNamesOfQprofAndMprof) {
  EXPECT_TRUE(is_default_trace_name("qprof_20261123014713.dat"));
  EXPECT_TRUE(is_default_trace_name("qprof_20261123014713.123_4242.dat"));
  EXPECT_TRUE(is_default_trace_name("qprof_node7.r3_20261123014713.123_4242.dat"));
  EXPECT_TRUE(is_default_trace_name("qprof_gpu_node.a.r12_20261123014713.123_4242.dat"));
  EXPECT_TRUE(is_default_trace_name("mprofile_20261123014713.dat"));
}

TEST(Catalog, AnythingElseIsLeftAlone) {
  EXPECT_FALSE(is_default_trace_name("qprof_results.dat"));
  EXPECT_FALSE(is_default_trace_name("qprof_node7.r_20261123014713.dat"));  // no rank digits
  EXPECT_FALSE(is_default_trace_name("qprof_node7.rx3_20261123014713.dat"));
  EXPECT_FALSE(is_default_trace_name("qprof_20261123014713.yaml"));
  EXPECT_FALSE(is_default_trace_name("mprofile_20261123014713_1.dat"));  // mprof's end at the time
  EXPECT_FALSE(is_default_trace_name("mprofile_node.r1_20261123014713.dat"));
  EXPECT_FALSE(is_default_trace_name("job.node7.3.dat"));
  EXPECT_FALSE(is_default_trace_name("qprof_2026112301471.dat"));  // 13 digits
}

// The run's start that a default name holds, in the local time it was written in: here UTC, so
// that the figures are the calendar's.
TEST(Catalog, TheStartTimeOfADefaultName) {
  const char* tz = std::getenv("TZ");
  const std::string saved = tz ? tz : "";
  ::setenv("TZ", "UTC0", 1);
  ::tzset();
  EXPECT_EQ(name_start_time("mprofile_20261123014713.dat"), 1795398433.0);
  EXPECT_EQ(name_start_time("qprof_node7.r3_20261123014713.123_4242.dat"), 1795398433.0);
  EXPECT_EQ(name_start_time("qprof_20240229000000.dat"), 1709164800.0);  // a leap day
  EXPECT_EQ(name_start_time("qprof_20250229000000.dat"), std::nullopt);  // no leap day that year
  EXPECT_EQ(name_start_time("mprofile_20251301000000.dat"), std::nullopt);
  EXPECT_EQ(name_start_time("qprof_20261123016013.dat"), std::nullopt);  // minute 60
  EXPECT_EQ(name_start_time("keep-me.dat"), std::nullopt);
  if (tz) {
    ::setenv("TZ", saved.c_str(), 1);
  } else {
    ::unsetenv("TZ");
  }
  ::tzset();
}

}  // namespace
}  // namespace qprof
