// SPDX-License-Identifier: Apache-2.0
// The spacing of the PSS passes asked by new highs of Σ RSS: close at a job's start, where a short
// job reaches its peak and ends, a tenth of a second once it has run a second.
#include "qprof/record/pss_sampler.hpp"

#include <gtest/gtest.h>

namespace qprof {
using record::PssSampler;
namespace {

using std::chrono::milliseconds;

TEST(PssSampler, NewHighsAreReadSoonerAtAJobsStart) {
  EXPECT_EQ(PssSampler::rise_spacing(milliseconds(0)), milliseconds(10));
  EXPECT_EQ(PssSampler::rise_spacing(milliseconds(60)), milliseconds(10));
  EXPECT_EQ(PssSampler::rise_spacing(milliseconds(500)), milliseconds(50));
  EXPECT_EQ(PssSampler::rise_spacing(milliseconds(1000)), milliseconds(100));
  EXPECT_EQ(PssSampler::rise_spacing(std::chrono::hours(5)), milliseconds(100));
}

}  // namespace
}  // namespace qprof
