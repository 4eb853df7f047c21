// SPDX-License-Identifier: Apache-2.0
// Aligned text: titles, facts as "label  value" lines, tables with right-aligned numbers and the
// lowest value of a column marked with '*'.
#include <algorithm>

#include "exporters.hpp"
#include "qprof/common/safe_text.hpp"

namespace qprof::report::detail {
namespace {

std::string pad(const std::string& s, std::size_t width, bool right) {
  const std::size_t w = display_width(s);
  if (w >= width) return s;
  const std::string fill(width - w, ' ');
  return right ? fill + s : s + fill;
}

void trim_right(std::string& line) {
  while (!line.empty() && line.back() == ' ') line.pop_back();
}

class TextExporter : public Exporter {
 public:
  std::string render(const Document& doc, const RenderOptions& options) const override {
    std::string out;
    if (!doc.facts.empty()) {
      std::size_t width = 0;
      for (const auto& f : doc.facts) {
        if (f.column.human) width = std::max(width, display_width(f.column.title));
      }
      for (const auto& f : doc.facts) {
        if (!f.column.human) continue;
        std::string line = pad(f.column.title, width, false) + "  " + human_fact(f, options);
        trim_right(line);
        out += line + "\n";
      }
    }
    append_tables(out, doc, [&](const Table& t) { return table(t, options); });
    return out;
  }

 private:
  static std::string table(const Table& t, const RenderOptions& options) {
    const HumanGrid g = human_grid(t, options);
    // The mark (or a space) follows the number, so that numbers stay aligned on their last digit.
    auto cell_text = [](const HumanColumn& c, const HumanCell& cell) {
      return c.marks_lowest ? cell.text + (cell.lowest ? "*" : " ") : cell.text;
    };
    std::vector<std::size_t> width(g.columns.size());
    for (std::size_t i = 0; i < g.columns.size(); ++i) {
      width[i] = display_width(g.columns[i].header) + (g.columns[i].marks_lowest ? 1 : 0);
      for (const auto& row : g.rows) width[i] = std::max(width[i], display_width(cell_text(g.columns[i], row[i])));
    }
    std::string out;
    if (!t.title.empty()) out += terminal_text(t.title) + "\n";
    auto line = [&](auto text_of) {
      std::string l;
      for (std::size_t i = 0; i < g.columns.size(); ++i) {
        if (i) l += "  ";
        l += pad(text_of(i), width[i], g.columns[i].right);
      }
      trim_right(l);
      out += l + "\n";
    };
    line([&](std::size_t i) { return g.columns[i].header + (g.columns[i].marks_lowest ? " " : ""); });
    for (const auto& row : g.rows) line([&](std::size_t i) { return cell_text(g.columns[i], row[i]); });
    if (g.any_lowest) out += "* lowest of its column\n";
    for (const std::string& n : t.notes) out += terminal_text(n) + "\n";
    return out;
  }
};

}  // namespace

std::unique_ptr<Exporter> make_text_exporter() { return std::make_unique<TextExporter>(); }

}  // namespace qprof::report::detail
