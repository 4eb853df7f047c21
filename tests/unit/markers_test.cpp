// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/markers.hpp"
#include "qprof/trace/stages.hpp"

#include <gtest/gtest.h>

#include <chrono>

namespace qprof {
using record::MarkerMatcher;
using trace::stage_end_name;
using trace::stage_start_name;
using trace::StageTracker;

namespace {

TEST(MarkerMatcher, DefaultPrefixWithLeadingSpacesAndTrimming) {
  MarkerMatcher m;
  EXPECT_EQ(m.match("QPROF_MARK: Calibration Start"), "Calibration Start");
  EXPECT_EQ(m.match("  \tQPROF_MARK:   Export  \r"), "Export");
  EXPECT_EQ(m.match("QPROF_MARK:"), "");
  // Anywhere in the line: what logging prints (INFO:root:…) is a marker; the label follows it.
  EXPECT_EQ(m.match("info: QPROF_MARK: x"), "x");
  EXPECT_EQ(m.match("INFO:root:QPROF_MARK: X Start"), "X Start");
  EXPECT_EQ(m.match("2026-11-23 05:00:00,123 - QPROF_MARK: a QPROF_MARK: b"), "a QPROF_MARK: b");
  EXPECT_EQ(m.match("QPROF_MARKER: x"), std::nullopt);
  EXPECT_EQ(m.match("QPROF_MARK x"), std::nullopt);
  EXPECT_EQ(m.match(""), std::nullopt);
}

TEST(MarkerMatcher, TheWholeLineIsSearched) {
  // The bounds on a label and on a line are the scanner's (marker_scanner_test.cpp).
  MarkerMatcher m;
  EXPECT_EQ(m.match(std::string(10000, '0') + " QPROF_MARK: Far"), "Far");
  EXPECT_EQ(m.match("QPROF_MARK: " + std::string(10000, 'a'))->size(), 10000u);
}

TEST(MarkerMatcher, RegexWithOneGroup) {
  MarkerMatcher m = *MarkerMatcher::compile("\\[profile\\] step=(\\w+(?: Start| End)?)");
  EXPECT_EQ(m.match("12:00 [profile] step=Train Start"), "Train Start");
  EXPECT_NE(MarkerMatcher::compile("(a)(b)").failure().message.find("it has 2"), std::string::npos);  // two groups
  MarkerMatcher one = *MarkerMatcher::compile("^>> (.*)$");
  EXPECT_EQ(one.match(">>  Train Start "), "Train Start");
  EXPECT_EQ(one.match("x >> Train"), std::nullopt);
  EXPECT_NE(MarkerMatcher::compile("nothing").failure().message.find("it has 0"), std::string::npos);
  EXPECT_NE(MarkerMatcher::compile("(broken").failure().message.find("not a valid regular expression"),
            std::string::npos);
}

TEST(MarkerMatcher, APatternThatBacktracksCatastrophicallyGivesUpOnTheLineWithinItsBound) {
  // std::regex took 26 s of CPU on one such line; PCRE2 gives up after kMarkerMatchSteps.
  MarkerMatcher m = *MarkerMatcher::compile("^(?:a|a)*X(.*)$");
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(m.match(std::string(31, 'a') + "bX"), std::nullopt);
  EXPECT_EQ(m.match(std::string(4000, 'a') + "bX"), std::nullopt);
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(took, 2.0);
  EXPECT_EQ(m.gave_up(), 2u);
  EXPECT_EQ(m.match("aaX label "), "label");  // the pattern still works where it can
  EXPECT_EQ(m.gave_up(), 2u);
  MarkerMatcher copy = m;  // the count is shared, as the tee's copy shares it with the summary's
  copy.match(std::string(31, 'a') + "bX");
  EXPECT_EQ(m.gave_up(), 3u);
  EXPECT_EQ(MarkerMatcher().gave_up(), 0u);
}

TEST(MarkerMatcher, BytesThatAreNoUtf8DoNotFailAMatch) {
  MarkerMatcher m = *MarkerMatcher::compile("^>> (.*)$");
  EXPECT_EQ(m.match(">> caf\xe9 \xff"), "caf\xe9 \xff");
}

TEST(StageNames, StartAndEndSuffixes) {
  EXPECT_EQ(stage_start_name("Quantization (Static) Start"), "Quantization (Static)");
  EXPECT_EQ(stage_end_name("Calibration End"), "Calibration");
  EXPECT_EQ(stage_start_name("Start"), std::nullopt);
  EXPECT_EQ(stage_start_name(" Start"), std::nullopt);
  EXPECT_EQ(stage_end_name("Weekend"), std::nullopt);
}

TEST(StageTracker, PairsNestedAndRepeatedStages) {
  StageTracker t;
  EXPECT_FALSE(t.on_marker("Outer Start", 1, 10));
  EXPECT_FALSE(t.on_marker("Inner Start", 2, 20));
  EXPECT_FALSE(t.on_marker("Lonely End", 2.5, 25));  // no Start: a plain checkpoint
  const auto inner = t.on_marker("Inner End", 3, 30);
  ASSERT_TRUE(inner);
  EXPECT_EQ(inner->name, "Inner");
  EXPECT_DOUBLE_EQ(inner->t_start, 2);
  EXPECT_EQ(inner->mem_end, 30u);
  EXPECT_FALSE(t.on_marker("Inner Start", 4, 40));
  const auto outer = t.on_marker("Outer End", 5, 50);
  ASSERT_TRUE(outer);
  EXPECT_EQ(outer->mem_start, 10u);
  const auto open = t.unclosed(6, 60);
  ASSERT_EQ(open.size(), 1u);
  EXPECT_EQ(open[0].name, "Inner");
  EXPECT_FALSE(open[0].closed);
  EXPECT_DOUBLE_EQ(open[0].t_start, 4);
}

TEST(StageTracker, InnermostAtATimeIsTheLatestStartedThenOpen) {
  StageTracker t;
  EXPECT_FALSE(t.innermost_at(1));
  t.on_marker("Outer Start", 1, 10);
  t.on_marker("Inner Start", 3, 30);
  EXPECT_FALSE(t.innermost_at(0.5));  // before any stage
  ASSERT_TRUE(t.innermost_at(2));
  EXPECT_EQ(t.innermost_at(2)->first, "Outer");  // Inner had not started
  EXPECT_EQ(t.innermost_at(3)->first, "Inner");
  EXPECT_DOUBLE_EQ(t.innermost_at(9)->second, 3);
  t.on_marker("Inner End", 4, 40);
  EXPECT_EQ(t.innermost_at(3.5)->first, "Outer") << "closed stages are the caller's to search";
}

}  // namespace
}  // namespace qprof
