// SPDX-License-Identifier: Apache-2.0
// Placing the names of checkpoints and stages along the top of a chart so that no two overlap.
//
// Labels sit in rows above the data. Each one is tried, in the order given (the caller puts
// the most important first), left-aligned at its left anchor and then right-aligned at its right
// anchor, in the first row where it overlaps nothing; a label that fits nowhere is shortened
// (with "…") and tried again, and dropped only when even its short form fits nowhere.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace qprof::plot {

struct LabelItem {
  std::string text;     // display text (see display_text)
  double left_anchor;   // pixels: where a left-aligned label starts
  double right_anchor;  // pixels: where a right-aligned label ends
};

struct LabelArea {
  double left = 0, right = 0;  // pixels: what labels must stay within
  int max_rows = 3;
  double gap = 6;          // pixels between two labels in a row
  double em = 13;          // pixels per em of the label font
  bool monospace = false;  // a text chart: every character is one em wide
};

struct PlacedLabel {
  std::size_t item = 0;  // index into the items
  std::string text;      // possibly shortened
  bool right_aligned = false;
  int row = 0;            // 0 is the top row
  double x0 = 0, x1 = 0;  // pixels it covers
};

struct LabelLayout {
  std::vector<PlacedLabel> placed;  // in the order of the items
  std::size_t dropped = 0;
  std::size_t shortened = 0;
  int rows = 0;  // rows used
};

// Width of `text` in pixels for a font of `em` pixels (one em per character when monospace).
double text_width_px(const std::string& text, double em, bool monospace = false);

LabelLayout layout_labels(const std::vector<LabelItem>& items, const LabelArea& area);

}  // namespace qprof::plot
