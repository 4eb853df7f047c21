// SPDX-License-Identifier: Apache-2.0
// The bracket of peaks: lower ≤ every figure that claims to bound the tree's peak ≤ upper.
#include "qprof/trace/bracket.hpp"

#include <gtest/gtest.h>

namespace qprof {
using trace::bracket_violations;
using trace::BracketInputs;
using trace::make_bracket;
using trace::PeakBracket;

namespace {

TEST(Bracket, UpperIsRaisedToTheLowerBoundAndEverySampledSum) {
  // A Σ VmHWM that missed late growth (the 281 MiB against 289.5 MiB).
  BracketInputs in{.kernel_process = 289, .hwm_sum = 281, .sampled_rss = 250, .sampled_pss = 200};
  EXPECT_FALSE(bracket_violations(PeakBracket{in.kernel_process, in.hwm_sum}, in).empty());
  const PeakBracket b = make_bracket(in);
  EXPECT_EQ(b.lower, 289u);
  EXPECT_EQ(b.upper, 289u);
  EXPECT_TRUE(bracket_violations(b, in).empty());
  in = {.kernel_process = 100, .hwm_sum = 300, .sampled_rss = 320, .sampled_pss = 150};
  EXPECT_EQ(make_bracket(in).upper, 320u);
  EXPECT_TRUE(bracket_violations(make_bracket(in), in).empty());
}

TEST(Bracket, AFigureThatIsNotABoundIsNotCalledOne) {
  const BracketInputs in{.kernel_process = 100, .hwm_sum = std::nullopt, .sampled_rss = 120, .sampled_pss = {}};
  const PeakBracket b = make_bracket(in);
  EXPECT_EQ(b.lower, 100u);
  EXPECT_FALSE(b.upper);
  EXPECT_TRUE(bracket_violations(b, in).empty());
}

}  // namespace
}  // namespace qprof
