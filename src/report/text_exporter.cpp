// SPDX-License-Identifier: Apache-2.0
// Aligned text: titles, facts as "label  value" lines, tables with right-aligned numbers and the
// lowest value of a column marked with '*'.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <optional>

#include "exporters.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/common/text_wrap.hpp"

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

// Lines of at most `width` columns, the later ones indented by two. A line breaks after a
// comma, semicolon or colon where it can (a list's names stay whole), else at a space; a word
// longer than the line stays whole.
std::string wrap(const std::string& text, std::size_t width) {
  std::string out, line;
  std::size_t start = 0;
  auto next_break = [&](std::size_t from, bool after_punctuation) {
    for (std::size_t i = from; i < text.size(); ++i) {
      if (text[i] == ' ' && may_break_at(text, i) && (!after_punctuation || (i > 0 && std::strchr(",;:", text[i - 1]))))
        return i;
    }
    return text.size();
  };
  std::size_t words_until = 0;  // the end of a phrase broken into its words
  while (start < text.size()) {
    std::size_t end = next_break(start, true);
    const std::size_t room = width > display_width(line) + 1 ? width - display_width(line) - 1 : 0;
    const std::size_t phrase = display_width(text.substr(start, end - start));
    // A phrase that does not fit: on a line less than half full, its words fill the line.
    if (phrase > room && 2 * display_width(line) < width) words_until = end;
    if (start < words_until) end = next_break(start, false);
    const std::string word = text.substr(start, end - start);
    if (!line.empty() && display_width(line) + 1 + display_width(word) > width) {
      out += line + "\n";
      line = "  ";
    }
    line += (line.empty() || line == "  " ? "" : " ") + word;
    start = end + 1;
  }
  if (!line.empty()) out += line + "\n";
  return out;
}

// A fact's line ("label   value") wrapped: the first line as far as it fits, then the value's
// words on lines indented by `indent`.
std::string wrap_fact(const std::string& line, std::size_t value_at, std::size_t indent, std::size_t width) {
  std::string out, current = line.substr(0, value_at);
  std::string_view rest = std::string_view(line).substr(value_at);
  bool has_word = false;
  while (!rest.empty()) {
    std::size_t end = rest.find(' ');  // a word, with the unit that follows it where it is a number
    while (end != std::string_view::npos && !may_break_at(rest, end)) end = rest.find(' ', end + 1);
    const std::string word(rest.substr(0, end));
    rest.remove_prefix(end == std::string_view::npos ? rest.size() : end + 1);
    if (word.empty()) continue;
    if (has_word && display_width(current) + 1 + display_width(word) > width) {
      trim_right(current);
      out += current + "\n";
      current.assign(indent, ' ');
      has_word = false;
    }
    current += (has_word ? " " : "") + word;
    has_word = true;
  }
  trim_right(current);
  return out + current + "\n";
}

// A table still wider than `text_width` once narrowed: its widest text column (a stage's or a
// run's name, which the user chose) is cut to fit, down to kNarrowestText columns.
void cut_text_columns(HumanGrid& g, std::vector<std::size_t>& width, std::size_t text_width) {
  constexpr std::size_t kNarrowestText = 12;
  std::size_t total = 0;
  for (std::size_t i = 0; i < width.size(); ++i) total += width[i] + (i ? 2 : 0);
  if (text_width == 0 || total <= text_width) return;
  std::optional<std::size_t> widest;
  for (std::size_t i = 0; i < g.columns.size(); ++i) {
    if (!g.columns[i].right && (!widest || width[i] > width[*widest])) widest = i;
  }
  if (!widest || width[*widest] <= kNarrowestText) return;
  const std::size_t to = std::max(kNarrowestText, width[*widest] - std::min(width[*widest], total - text_width));
  for (auto& row : g.rows) row[*widest].text = cut_to_columns(row[*widest].text, to);
  g.columns[*widest].header = cut_to_columns(g.columns[*widest].header, to);
  width[*widest] = to;
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
        // Too wide: the value goes on below its label, wrapped in its own column (or in two
        // columns of indent where the labels take half the width).
        if (options.text_width > 0 && display_width(line) > options.text_width) {
          const std::size_t indent = width + 2 < options.text_width / 2 ? width + 2 : 2;
          line = pad(f.column.title, width, false) + "  " + human_fact(f, options);
          out += wrap_fact(line, width + 2, indent, options.text_width);
          continue;
        }
        out += line + "\n";
      }
    }
    append_tables(out, doc, [&](const Table& t) { return table(t, options); });
    return out;
  }

 private:
  static std::string table(const Table& t, const RenderOptions& options) {
    HumanGrid g = human_grid(t, options);
    // The mark (or a space) follows the number, so that numbers stay aligned on their last digit.
    auto cell_text = [](const HumanColumn& c, const HumanCell& cell) {
      return c.marks_lowest ? cell.text + (cell.lowest ? "*" : " ") : cell.text;
    };
    std::vector<std::size_t> width(g.columns.size());
    for (std::size_t i = 0; i < g.columns.size(); ++i) {
      width[i] = display_width(g.columns[i].header) + (g.columns[i].marks_lowest ? 1 : 0);
      for (const auto& row : g.rows) width[i] = std::max(width[i], display_width(cell_text(g.columns[i], row[i])));
    }
    const std::vector<std::string> left_out = narrow(g, width, t, options);
    cut_text_columns(g, width, options.text_width);
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
    for (const std::string& n : t.notes) {
      out += options.text_width ? wrap(terminal_text(n), options.text_width) : terminal_text(n) + "\n";
    }
    if (!left_out.empty()) {
      // Named, so that no one takes a missing column for a figure the trace lacks.
      constexpr std::size_t kNamed = 16;
      std::string names;
      for (std::size_t i = 0; i < left_out.size() && i < kNamed; ++i) names += (i ? ", " : "") + left_out[i];
      if (left_out.size() > kNamed) names += " and " + std::to_string(left_out.size() - kNamed) + " more";
      const std::size_t named = options.named_width ? options.named_width : options.text_width;
      out += wrap("left out to fit " + std::to_string(named) + " columns: " + names +
                      (options.wider.empty() ? "" : "; " + options.wider),
                  options.text_width);
    }
    return out;
  }

  // Leaves out the columns of highest Column::narrow (the later first among equals), each with
  // its ratio, until the table fits options.text_width; returns their titles, in table order.
  static std::vector<std::string> narrow(HumanGrid& g, std::vector<std::size_t>& width, const Table& t,
                                         const RenderOptions& options) {
    std::vector<std::size_t> dropped;
    auto total = [&] {
      std::size_t w = 0;
      for (std::size_t i = 0; i < width.size(); ++i) w += width[i] + (i ? 2 : 0);
      return w;
    };
    while (options.text_width > 0 && total() > options.text_width) {
      std::optional<std::size_t> pick;
      for (std::size_t i = 0; i < g.columns.size(); ++i) {
        if (g.columns[i].narrow > 0 && (!pick || g.columns[i].narrow >= g.columns[*pick].narrow)) pick = i;
      }
      if (!pick) break;  // nothing left that may go: wider than asked
      const std::size_t source = g.columns[*pick].source;
      dropped.push_back(source);
      for (std::size_t i = g.columns.size(); i-- > 0;) {
        if (g.columns[i].source != source) continue;
        g.columns.erase(g.columns.begin() + static_cast<std::ptrdiff_t>(i));
        width.erase(width.begin() + static_cast<std::ptrdiff_t>(i));
        for (auto& row : g.rows) row.erase(row.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
    std::sort(dropped.begin(), dropped.end());
    g.any_lowest = false;
    for (std::size_t i = 0; i < g.columns.size(); ++i) {
      for (const auto& row : g.rows) g.any_lowest = g.any_lowest || (g.columns[i].marks_lowest && row[i].lowest);
    }
    std::vector<std::string> titles;
    for (std::size_t s : dropped) titles.push_back(terminal_text(t.columns[s].title));
    return titles;
  }
};

}  // namespace

std::unique_ptr<Exporter> make_text_exporter() { return std::make_unique<TextExporter>(); }

}  // namespace qprof::report::detail
