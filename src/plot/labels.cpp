// SPDX-License-Identifier: Apache-2.0
#include "qprof/plot/labels.hpp"

#include <algorithm>
#include <utility>

#include "qprof/plot/escape.hpp"

namespace qprof::plot {
namespace {

struct Span {
  double x0, x1;
};

// The shortened forms tried when the full text fits nowhere, in code points ("…" included).
constexpr std::size_t kShortForms[] = {28, 18, 10};

bool fits(const std::vector<Span>& row, double x0, double x1, double gap) {
  for (const Span& s : row) {
    if (x0 < s.x1 + gap && s.x0 < x1 + gap) return false;
  }
  return true;
}

}  // namespace

double text_width_px(const std::string& text, double em, bool monospace) {
  return (monospace ? static_cast<double>(utf8_length(text)) : text_width_em(text)) * em;
}

LabelLayout layout_labels(const std::vector<LabelItem>& items, const LabelArea& area) {
  LabelLayout out;
  std::vector<std::vector<Span>> rows(static_cast<std::size_t>(std::max(area.max_rows, 0)));

  for (std::size_t i = 0; i < items.size(); ++i) {
    const LabelItem& item = items[i];
    std::vector<std::string> forms{item.text};
    const std::size_t length = utf8_length(item.text);
    for (std::size_t n : kShortForms) {
      if (n < length) forms.push_back(display_text(item.text, n));
    }
    bool placed = false;
    for (std::size_t f = 0; f < forms.size() && !placed; ++f) {
      const double w = text_width_px(forms[f], area.em, area.monospace);
      const std::pair<double, double> spans[2] = {{item.left_anchor, item.left_anchor + w},
                                                  {item.right_anchor - w, item.right_anchor}};
      for (std::size_t r = 0; r < rows.size() && !placed; ++r) {
        for (int side = 0; side < 2 && !placed; ++side) {
          const auto [x0, x1] = spans[side];
          if (x0 < area.left || x1 > area.right || !fits(rows[r], x0, x1, area.gap)) continue;
          rows[r].push_back({x0, x1});
          out.placed.push_back(PlacedLabel{i, forms[f], side == 1, static_cast<int>(r), x0, x1});
          out.rows = std::max(out.rows, static_cast<int>(r) + 1);
          if (f > 0) ++out.shortened;
          placed = true;
        }
      }
    }
    if (!placed) ++out.dropped;
  }
  return out;
}

}  // namespace qprof::plot
