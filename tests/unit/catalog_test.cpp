// SPDX-License-Identifier: Apache-2.0
// Which files qprof list and qprof clean may touch: default names only, ranks' names included.
#include "qprof/analysis/catalog.hpp"

#include <gtest/gtest.h>

namespace qprof {
using analysis::is_default_trace_name;
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

}  // namespace
}  // namespace qprof
