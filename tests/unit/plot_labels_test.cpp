// SPDX-License-Identifier: Apache-2.0
#include "qprof/plot/labels.hpp"

#include <gtest/gtest.h>

#include <random>

#include "qprof/plot/escape.hpp"

namespace qprof::plot {
namespace {

LabelArea area(double left, double right, int rows) {
  LabelArea a;
  a.left = left;
  a.right = right;
  a.max_rows = rows;
  a.gap = 6;
  a.em = 13;
  return a;
}

void expect_no_overlap(const LabelLayout& l, double gap) {
  for (std::size_t i = 0; i < l.placed.size(); ++i) {
    for (std::size_t j = i + 1; j < l.placed.size(); ++j) {
      const PlacedLabel& a = l.placed[i];
      const PlacedLabel& b = l.placed[j];
      if (a.row != b.row) continue;
      EXPECT_TRUE(a.x1 + gap <= b.x0 + 1e-9 || b.x1 + gap <= a.x0 + 1e-9)
          << "'" << a.text << "' [" << a.x0 << "," << a.x1 << "] and '" << b.text << "' [" << b.x0 << "," << b.x1
          << "] in row " << a.row;
    }
  }
}

TEST(PlotLabels, FarApartLabelsShareTheTopRow) {
  const LabelLayout l =
      layout_labels({{"Load", 10, 10}, {"Calibration", 300, 300}, {"Export", 700, 700}}, area(0, 1000, 3));
  ASSERT_EQ(l.placed.size(), 3u);
  for (const PlacedLabel& p : l.placed) {
    EXPECT_EQ(p.row, 0);
    EXPECT_FALSE(p.right_aligned);
  }
  EXPECT_EQ(l.rows, 1);
  EXPECT_EQ(l.dropped, 0u);
}

TEST(PlotLabels, CloseLabelsGoToLowerRows) {
  const LabelLayout l = layout_labels({{"checkpoint one", 100, 100}, {"checkpoint two", 110, 110}, {"three", 120, 120}},
                                      area(0, 1000, 3));
  ASSERT_EQ(l.placed.size(), 3u);
  expect_no_overlap(l, 6);
  EXPECT_EQ(l.rows, 3);
}

TEST(PlotLabels, ALabelAtTheRightEdgeIsRightAligned) {
  const LabelLayout l = layout_labels({{"saved the final weights", 985, 985}}, area(0, 1000, 2));
  ASSERT_EQ(l.placed.size(), 1u);
  EXPECT_TRUE(l.placed[0].right_aligned);
  EXPECT_LE(l.placed[0].x1, 1000);
  EXPECT_NEAR(l.placed[0].x1, 985, 1e-9);
}

TEST(PlotLabels, TooManyLabelsAreShortenedThenDropped) {
  std::vector<LabelItem> items;
  for (int i = 0; i < 40; ++i)
    items.push_back({"a rather long checkpoint label number " + std::to_string(i), 100.0 + i, 100.0 + i});
  const LabelLayout l = layout_labels(items, area(0, 600, 2));
  expect_no_overlap(l, 6);
  EXPECT_GT(l.dropped, 0u);
  EXPECT_EQ(l.placed.size() + l.dropped, items.size());
  for (const PlacedLabel& p : l.placed) {
    EXPECT_GE(p.x0, 0);
    EXPECT_LE(p.x1, 600);
  }
}

TEST(PlotLabels, RandomLayoutsNeverOverlapAndStayInside) {
  std::mt19937 rng(7);
  for (int round = 0; round < 200; ++round) {
    std::vector<LabelItem> items;
    const int n = 1 + static_cast<int>(rng() % 30);
    for (int i = 0; i < n; ++i) {
      const double x0 = rng() % 1200;
      const double x1 = x0 + (rng() % 3 == 0 ? static_cast<double>(rng() % 300) : 0.0);
      items.push_back({std::string(1 + rng() % 30, static_cast<char>('a' + rng() % 26)), x0 + 4, x1 - 4});
    }
    LabelArea a = area(50, 1150, 1 + static_cast<int>(rng() % 4));
    a.monospace = rng() % 2 == 0;
    a.em = a.monospace ? 1 : 13;
    a.gap = a.monospace ? 2 : 6;
    const LabelLayout l = layout_labels(items, a);
    expect_no_overlap(l, a.gap);
    EXPECT_EQ(l.placed.size() + l.dropped, items.size());
    for (const PlacedLabel& p : l.placed) {
      EXPECT_GE(p.x0, a.left - 1e-9);
      EXPECT_LE(p.x1, a.right + 1e-9);
      EXPECT_LT(p.row, a.max_rows);
      EXPECT_NEAR(p.x1 - p.x0, text_width_px(p.text, a.em, a.monospace), 1e-6);
    }
  }
}

TEST(PlotLabels, TextWidthMonospaceCountsCharacters) {
  EXPECT_EQ(text_width_px("héllo", 1, true), 5);
  EXPECT_NEAR(text_width_px("M", 10, false), 8.63, 1e-9);
}

}  // namespace
}  // namespace qprof::plot
