// SPDX-License-Identifier: Apache-2.0
// GitHub-flavoured Markdown: facts as a list, each table under its bold title, the lowest value
// of a column in bold. Cells are padded so that the raw file reads as well as the rendered one.
#include <algorithm>

#include "exporters.hpp"
#include "qprof/common/safe_text.hpp"

namespace qprof::report::detail {
namespace {

// Text that Markdown must not read as markup (a '|' would also end a cell).
std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (std::string_view("\\`*_[]<>|#").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string pad(const std::string& s, std::size_t width, bool right) {
  const std::size_t w = display_width(s);
  if (w >= width) return s;
  const std::string fill(width - w, ' ');
  return right ? fill + s : s + fill;
}

class MarkdownExporter : public Exporter {
 public:
  std::string render(const Document& doc, const RenderOptions& options) const override {
    std::string out;
    for (const auto& f : doc.facts) {
      if (f.column.human) out += "- " + escape(f.column.title) + ": " + escape(human_fact(f, options)) + "\n";
    }
    append_tables(out, doc, [&](const Table& t) { return table(t, options); });
    return out;
  }

 private:
  static std::string table(const Table& t, const RenderOptions& options) {
    const HumanGrid g = human_grid(t, options);
    std::vector<std::vector<std::string>> cells;
    for (const auto& row : g.rows) {
      std::vector<std::string> r;
      for (const HumanCell& c : row) r.push_back(c.lowest ? "**" + escape(c.text) + "**" : escape(c.text));
      cells.push_back(std::move(r));
    }
    std::vector<std::size_t> width(g.columns.size(), 3);
    for (std::size_t i = 0; i < g.columns.size(); ++i) {
      width[i] = std::max(width[i], display_width(escape(g.columns[i].header)));
      for (const auto& r : cells) width[i] = std::max(width[i], display_width(r[i]));
    }
    std::string out;
    if (!t.title.empty()) out += "**" + escape(terminal_text(t.title)) + "**\n\n";
    std::string head = "|", rule = "|";
    for (std::size_t i = 0; i < g.columns.size(); ++i) {
      head += " " + pad(escape(g.columns[i].header), width[i], g.columns[i].right) + " |";
      rule += g.columns[i].right ? " " + std::string(width[i] - 1, '-') + ": |"
                                 : " :" + std::string(width[i] - 1, '-') + " |";
    }
    out += head + "\n" + rule + "\n";
    for (const auto& r : cells) {
      std::string line = "|";
      for (std::size_t i = 0; i < r.size(); ++i) line += " " + pad(r[i], width[i], g.columns[i].right) + " |";
      out += line + "\n";
    }
    if (g.any_lowest || !t.notes.empty()) out += "\n";
    if (g.any_lowest) out += "Bold: the lowest of its column.\n";
    for (const std::string& n : t.notes) out += escape(terminal_text(n)) + "\n";
    return out;
  }
};

}  // namespace

std::unique_ptr<Exporter> make_markdown_exporter() { return std::make_unique<MarkdownExporter>(); }

}  // namespace qprof::report::detail
