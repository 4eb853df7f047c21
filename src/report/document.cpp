// SPDX-License-Identifier: Apache-2.0
// The document model's shared pieces: formats, units, keys, and number forms.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "exporters.hpp"
#include "qprof/common/number_text.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/common/units.hpp"

namespace qprof::report {

std::optional<Format> parse_format(std::string_view name) {
  if (name == "text") return Format::text;
  if (name == "md" || name == "markdown") return Format::markdown;
  if (name == "csv") return Format::csv;
  if (name == "json") return Format::json;
  return std::nullopt;
}

std::unique_ptr<Exporter> make_exporter(Format format) {
  switch (format) {
    case Format::text:
      return detail::make_text_exporter();
    case Format::markdown:
      return detail::make_markdown_exporter();
    case Format::csv:
      return detail::make_csv_exporter();
    case Format::json:
      return detail::make_json_exporter();
  }
  return detail::make_text_exporter();
}

void leave_out_rows(Table& table, std::size_t left, std::string_view what) {
  table.rows_left_out = left;
  table.notes.push_back(std::to_string(left) + " more " + std::string(what) + " not shown: a table holds the first " +
                        std::to_string(kMaxTableRows));
}

std::vector<std::string> table_names(const Document& doc) {
  std::vector<std::string> names;
  if (!doc.facts.empty()) names.push_back("facts");
  for (const Table& t : doc.tables) names.push_back(t.name);
  return names;
}

bool choose_csv_table(Document& doc, std::string_view name) {
  for (std::size_t i = 0; i < doc.tables.size(); ++i) {
    if (doc.tables[i].name == name) {
      doc.csv_table = i;
      return true;
    }
  }
  if (name != "facts" || doc.facts.empty()) return false;
  // One row, so that the rows of many runs append into one sheet.
  Table t;
  t.name = "facts";
  t.title = "Facts";
  t.rows.emplace_back();
  for (const Document::Fact& f : doc.facts) {
    t.columns.push_back(f.column);
    t.rows.back().push_back(f.cell);
  }
  doc.tables.push_back(std::move(t));
  doc.csv_table = doc.tables.size() - 1;
  return true;
}

std::string render(const Document& doc, Format format, const RenderOptions& options) {
  return make_exporter(format)->render(doc, options);
}

namespace {

bool is_size(Kind k) { return k == Kind::bytes || k == Kind::signed_bytes; }
bool is_time(Kind k) { return k == Kind::seconds || k == Kind::moment; }

int decimals(Unit u) {
  switch (u) {
    case Unit::B:
    case Unit::KiB:
    case Unit::KB:
      return 0;
    case Unit::MiB:
    case Unit::MB:
      return 1;
    case Unit::GiB:
    case Unit::GB:
      return 2;
  }
  return 1;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

Unit table_unit(const Table& table, const RenderOptions& options) {
  if (options.unit) return *options.unit;
  double largest = 0;
  for (const auto& row : table.rows) {
    for (std::size_t i = 0; i < table.columns.size() && i < row.size(); ++i) {
      if (!is_size(table.columns[i].kind) || !table.columns[i].human) continue;  // the unit is for people
      for (const auto& v : {row[i].value, row[i].min, row[i].max}) {
        if (v) largest = std::max(largest, std::fabs(*v));
      }
    }
  }
  return auto_unit(bytes_from_double(largest));
}

std::string machine_key(const Column& c, const RenderOptions& options) {
  std::string key = c.key;
  if (is_size(c.kind)) key += options.unit ? "_" + lower(unit_name(*options.unit)) : "_bytes";
  if (is_time(c.kind)) key += "_s";
  return key;
}

double machine_value(const Column& c, double value, const RenderOptions& options) {
  if (is_size(c.kind)) {
    if (!options.unit) return std::round(value);
    value /= unit_bytes(*options.unit);
  }
  if (c.kind == Kind::count || c.kind == Kind::flag) return std::round(value);
  return std::round(value * 1e6) / 1e6;
}

// `v` with `d` (0..6) decimal places, whole at any magnitude.
std::string places(double v, int d) {
  static constexpr const char* kFormats[] = {"%.0f", "%.1f", "%.2f", "%.3f", "%.4f", "%.5f", "%.6f"};
  return printf_number(kFormats[std::clamp(d, 0, 6)], v);
}

std::string human_value(const Column& c, double value, Unit unit) {
  switch (c.kind) {
    case Kind::bytes:
    case Kind::signed_bytes: {
      const double v = value / unit_bytes(unit);
      int d = decimals(unit);
      // Under 1 GiB in a GiB table (--unit GiB on a small job, or a small row beside a large
      // one), three significant digits: 64 MiB reads 0.0625, not 0.06.
      if ((unit == Unit::GiB || unit == Unit::GB) && v != 0 && std::fabs(v) < 1)
        d = std::min(6, std::max(d, 2 - static_cast<int>(std::floor(std::log10(std::fabs(v))))));
      std::string s = places(v, d);
      // A change shows its sign; one that rounds to nothing shows none.
      if (s.find_first_not_of("-0.") == std::string::npos) return places(0.0, d);
      if (c.kind == Kind::signed_bytes && v > 0) s = "+" + s;
      return s;
    }
    case Kind::seconds:
    case Kind::moment:
      return printf_number("%.3f", value);
    case Kind::share:
      return printf_number("%.1f%%", value * 100.0);
    case Kind::count:
      return printf_number("%.0f", value);
    case Kind::flag:
      return value != 0 ? "yes" : "no";
    case Kind::text:
      break;
  }
  return "";
}

std::string human_title(const Column& c, Unit unit) {
  if (is_size(c.kind)) return c.title + " " + std::string(unit_name(unit));
  if (is_time(c.kind)) return c.title + " s";
  return c.title;
}

std::size_t display_width(std::string_view s) {
  std::size_t n = 0;
  for (unsigned char c : s) {
    if ((c & 0xC0) != 0x80) ++n;
  }
  return n;
}

namespace detail {

HumanGrid human_grid(const Table& table, const RenderOptions& options) {
  const Unit unit = table_unit(table, options);
  HumanGrid g;
  std::vector<std::size_t> shown;
  for (std::size_t i = 0; i < table.columns.size(); ++i) {
    if (table.columns[i].human) shown.push_back(i);
  }
  std::stable_sort(shown.begin(), shown.end(),
                   [&](std::size_t a, std::size_t b) { return table.columns[a].order < table.columns[b].order; });
  for (std::size_t i : shown) {
    const Column& c = table.columns[i];
    g.columns.push_back({terminal_text(human_title(c, unit)), c.kind != Kind::text, c.has_lowest, i, c.narrow});
    // Each ratio named for its figure: two columns both called "ratio" read as one.
    if (c.show_ratio) g.columns.push_back({is_time(c.kind) ? "time ratio" : "peak ratio", true, false, i, c.narrow});
  }
  // A mark is read at the precision printed: where the candidates all print alike, "0.0" beside
  // "0.0*" would mark a difference no one can see, so none is marked; where they differ, every
  // cell that prints as the lowest is.
  std::vector<std::optional<std::string>> lowest_text(table.columns.size());
  for (std::size_t i : shown) {
    const Column& c = table.columns[i];
    if (!c.has_lowest || c.kind == Kind::text) continue;
    std::optional<std::string> low;
    bool differ = false;
    std::optional<std::string> seen;
    for (const auto& row : table.rows) {
      const Cell& cell = row[i];
      if (!cell.value || cell.summed) continue;
      const std::string text = human_value(c, *cell.value, unit);
      if (seen && *seen != text) differ = true;
      seen = text;
      if (cell.lowest) low = text;
    }
    if (differ) lowest_text[i] = low;
  }
  for (const auto& row : table.rows) {
    std::vector<HumanCell> out;
    for (std::size_t i : shown) {
      const Column& c = table.columns[i];
      const Cell& cell = row[i];
      HumanCell h;
      if (c.kind == Kind::text) {
        h.text = cell.text.empty() ? "-" : terminal_text(cell.text);
      } else if (cell.value) {
        h.text = human_value(c, *cell.value, unit);
        if (cell.min && cell.max) {
          // The range, unless it reads as one number at this precision.
          const std::string lo = human_value(c, *cell.min, unit), hi = human_value(c, *cell.max, unit);
          if (lo != hi) h.text += " (" + lo + "\u2013" + hi + ")";
        }
      } else {
        h.text = "-";
      }
      if (!cell.note.empty()) h.text += " (" + terminal_text(cell.note) + ")";
      h.lowest = lowest_text[i] && cell.value && !cell.summed && human_value(c, *cell.value, unit) == *lowest_text[i];
      g.any_lowest = g.any_lowest || h.lowest;
      out.push_back(std::move(h));
      if (c.show_ratio) out.push_back({cell.ratio ? printf_number("%.2f", *cell.ratio) : "-", false});
    }
    g.rows.push_back(std::move(out));
  }
  return g;
}

std::string human_fact(const Document::Fact& f, const RenderOptions& options) {
  const Column& c = f.column;
  if (c.kind == Kind::text) return terminal_text(f.cell.text);
  if (!f.cell.value) return "-";
  switch (c.kind) {
    case Kind::bytes:
      if (options.unit)
        return human_value(c, *f.cell.value, *options.unit) + " " + std::string(unit_name(*options.unit));
      return human_bytes(bytes_from_double(*f.cell.value));
    case Kind::signed_bytes: {
      // A headroom below the limit is negative: the sign, then the size in the same words.
      const double v = *f.cell.value;
      const Unit unit = options.unit.value_or(Unit::MiB);
      if (options.unit) return human_value(c, v, unit) + " " + std::string(unit_name(unit));
      return (v < 0 ? "-" : "+") + human_bytes(bytes_from_double(std::fabs(v)));
    }
    case Kind::seconds:
      return human_seconds(*f.cell.value);
    case Kind::moment:
      return human_value(c, *f.cell.value, Unit::MiB) + " s";
    default:
      return human_value(c, *f.cell.value, Unit::MiB);
  }
}

}  // namespace detail
}  // namespace qprof::report
