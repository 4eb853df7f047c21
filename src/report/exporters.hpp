// SPDX-License-Identifier: Apache-2.0
// Inside the report module: the exporters' factories and what the human formats share.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "qprof/report/report.hpp"

namespace qprof::report::detail {

std::unique_ptr<Exporter> make_text_exporter();
std::unique_ptr<Exporter> make_markdown_exporter();
std::unique_ptr<Exporter> make_csv_exporter();
std::unique_ptr<Exporter> make_json_exporter();

// A table as text and Markdown lay it out: the human columns, each followed by its ratio column
// when it shows one, every cell already formatted.
struct HumanColumn {
  std::string header;
  bool right = false;         // numbers are right-aligned
  bool marks_lowest = false;  // its cells may be the lowest of the column
  std::size_t source = 0;     // the table's column it shows (a ratio: the column it follows)
  int narrow = 0;             // Column::narrow of that column
};
struct HumanCell {
  std::string text;
  bool lowest = false;
};
struct HumanGrid {
  std::vector<HumanColumn> columns;
  std::vector<std::vector<HumanCell>> rows;
  bool any_lowest = false;
};
HumanGrid human_grid(const Table& table, const RenderOptions& options);

// Appends every table that has rows, a blank line before each but a first one on empty output;
// `render_table(const Table&)` gives a table's text in the exporter's own form.
template <typename F>
void append_tables(std::string& out, const Document& doc, F&& render_table) {
  for (const Table& t : doc.tables) {
    if (t.rows.empty()) continue;
    if (!out.empty()) out += "\n";
    out += render_table(t);
  }
}

// A fact as the human formats show it: "35.6 s", "906.0 MiB", the text.
std::string human_fact(const Document::Fact& fact, const RenderOptions& options);

}  // namespace qprof::report::detail
