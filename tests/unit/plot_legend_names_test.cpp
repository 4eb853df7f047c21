// SPDX-License-Identifier: Apache-2.0
// The names an overlay's key gives its traces, and key entries wrapped rather than cut.
#include <gtest/gtest.h>

#include <set>

#include "qprof/plot/escape.hpp"
#include "qprof/plot/legend_names.hpp"

namespace qprof::plot {
namespace {

TEST(LegendNames, NamesThatFitAreKeptWhole) {
  EXPECT_EQ(legend_names({"baseline", "with cache"}, 24), (std::vector<std::string>{"baseline", "with cache"}));
}

TEST(LegendNames, ASharedLongPrefixIsLeftOutAndWhatDiffersKept) {
  const std::vector<std::string> names =
      legend_names({"experiment_resnet50_batch64_lr0.01_seed1", "experiment_resnet50_batch64_lr0.01_seed2",
                    "experiment_resnet50_batch64_lr0.01_seed3"},
                   17);
  EXPECT_EQ(names, (std::vector<std::string>{"…seed1", "…seed2", "…seed3"}));
}

TEST(LegendNames, ASharedTailIsLeftOutToo) {
  const std::vector<std::string> names =
      legend_names({"batch16_resnet50_imagenet_fp16_run", "batch256_resnet50_imagenet_fp16_run"}, 20);
  EXPECT_EQ(names, (std::vector<std::string>{"batch16…", "batch256…"}));
}

TEST(LegendNames, LongDifferencesKeepTheirStartWithinTheWidth) {
  const std::vector<std::string> names = legend_names(
      {"sweep/first_configuration_with_a_very_long_name", "sweep/second_configuration_with_a_very_long_name"}, 16);
  for (const std::string& n : names) EXPECT_LE(utf8_length(n), 16u) << n;
  EXPECT_NE(names[0], names[1]);
  EXPECT_EQ(names[0].rfind("…first", 0), 0u) << names[0];
}

TEST(LegendNames, NeverTwoAlike) {
  // Alike from the start, or alike once cut: numbered by their place.
  EXPECT_EQ(legend_names({"run", "run", "other"}, 24), (std::vector<std::string>{"run #1", "run #2", "other"}));
  const std::vector<std::string> names =
      legend_names({"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa2"}, 12);
  EXPECT_NE(names[0], names[1]);
  for (const std::string& n : names) EXPECT_LE(utf8_length(n), 12u) << n;
  // Random names of a few letters: every list gives distinct names.
  unsigned seed = 7;
  for (int round = 0; round < 300; ++round) {
    std::vector<std::string> labels;
    const int n = 2 + round % 5;
    for (int i = 0; i < n; ++i) {
      std::string s;
      const int len = 1 + static_cast<int>((seed = seed * 1103515245 + 12345) >> 16) % 40;
      for (int k = 0; k < len; ++k) s += "ab_-"[((seed = seed * 1103515245 + 12345) >> 16) % 4];
      labels.push_back(s);
    }
    const std::vector<std::string> out = legend_names(labels, 10);
    EXPECT_EQ(std::set<std::string>(out.begin(), out.end()).size(), out.size()) << round;
  }
}

TEST(LegendNames, ControlCharactersAreCleaned) {
  const std::vector<std::string> names = legend_names({"a\nb", "c\td"}, 24);
  EXPECT_EQ(names, (std::vector<std::string>{"a b", "c d"}));
}

TEST(WrapTitle, LongEntriesWrapAtSpacesWithUnitsKeptWithTheirNumbers) {
  EXPECT_EQ(wrap_title("…seed1, footprint peak 5.60 GiB at 6 s", 17),
            (std::vector<std::string>{"…seed1, footprint", "  peak 5.60 GiB", "  at 6 s"}));
  EXPECT_EQ(wrap_title("short", 17), (std::vector<std::string>{"short"}));
}

TEST(WrapTitle, AWordLongerThanALineIsBrokenNeverInsideACharacter) {
  const std::vector<std::string> lines = wrap_title("ééééééééééééééé x", 8);
  ASSERT_GE(lines.size(), 2u);
  std::string joined;
  for (const std::string& l : lines) {
    EXPECT_LE(utf8_length(l), 8u) << l;
    joined += l;
  }
  EXPECT_EQ(utf8_length(joined), utf8_length(display_text(joined, 400)));  // valid UTF-8 throughout
  EXPECT_NE(joined.find("ééééé"), std::string::npos);
}

}  // namespace
}  // namespace qprof::plot
