// SPDX-License-Identifier: Apache-2.0
// `qprof compare --pivot ROWS,COLUMNS`: the comparison folded into a grid, the shape of Quark's
// calibration table (rows: models, columns: methods, cells: peak memory). Each row of the
// comparison names its cell with its label, "ROW/COLUMN".
#include <algorithm>
#include <map>

#include "qprof/report/report.hpp"

namespace qprof::report {
using analysis::CompareEntry;
using analysis::CompareValue;
using analysis::Comparison;
using analysis::metric_info;
using analysis::peak_column;
namespace {

struct Place {
  std::size_t row = 0;
  std::size_t column = 0;
};

// The index of `key` in `keys`, added at the end when new: rows and columns keep the order in
// which the comparison first names them.
std::size_t index_of(std::vector<std::string>& keys, const std::string& key) {
  const auto it = std::find(keys.begin(), keys.end(), key);
  if (it != keys.end()) return static_cast<std::size_t>(it - keys.begin());
  keys.push_back(key);
  return keys.size() - 1;
}

}  // namespace

Result<Document> pivot_document(const std::vector<CompareEntry>& entries, const Comparison& c, const PivotAxes& axes) {
  const std::optional<std::size_t> peak = peak_column(c, c.metric);
  if (!peak) return Failure{"no trace has " + std::string(metric_info(c.metric).name)};

  std::vector<std::string> row_keys, column_keys;
  std::vector<Place> places;
  std::map<std::pair<std::size_t, std::size_t>, std::string> taken;
  for (const CompareEntry& e : entries) {
    const std::size_t slash = e.label.rfind('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == e.label.size()) {
      return Failure{"the label '" + e.label + "' is not " + axes.rows + "/" + axes.columns +
                     " (give --label ROW/COLUMN for every row)"};
    }
    const Place p{index_of(row_keys, e.label.substr(0, slash)), index_of(column_keys, e.label.substr(slash + 1))};
    const auto [it, fresh] = taken.emplace(std::make_pair(p.row, p.column), e.label);
    if (!fresh) return Failure{"two rows are the cell '" + e.label + "'"};
    places.push_back(p);
  }
  const bool repeated =
      std::any_of(entries.begin(), entries.end(), [](const CompareEntry& e) { return e.runs.size() > 1; });

  Document d;
  Column metric_fact;
  metric_fact.key = metric_fact.title = "metric";
  metric_fact.human = false;
  d.facts.push_back({metric_fact, Cell::string(std::string(metric_info(c.metric).name))});

  Table t;
  t.name = "pivot";
  t.title = "peak " + std::string(metric_info(c.metric).title) + " by " + axes.rows + " and " + axes.columns;
  Column first;
  first.key = first.title = axes.rows;
  t.columns.push_back(first);
  for (const std::string& k : column_keys) {
    Column col;
    col.key = "peak";
    col.key_detail = k;
    col.title = k;
    col.kind = Kind::bytes;
    col.has_spread = repeated;
    t.columns.push_back(col);
  }
  Column lowest;
  lowest.key = "lowest";
  lowest.title = "lowest " + axes.columns;
  t.columns.push_back(lowest);

  t.rows.assign(row_keys.size(), {});
  for (std::size_t r = 0; r < row_keys.size(); ++r) {
    t.rows[r].push_back(Cell::string(row_keys[r]));
    t.rows[r].resize(1 + column_keys.size());
  }
  for (std::size_t e = 0; e < entries.size(); ++e) {
    const CompareValue& v = c.rows[e][*peak];
    if (!v.value) continue;
    Cell& cell = t.rows[places[e].row][1 + places[e].column];
    cell.value = v.value->median;
    cell.min = v.value->min;
    cell.max = v.value->max;
  }
  // The answer to "which one fits": the column of the lowest cell of each row (ties named together).
  for (std::vector<Cell>& row : t.rows) {
    std::optional<double> low;
    for (std::size_t k = 1; k < row.size(); ++k) {
      if (row[k].value && (!low || *row[k].value < *low)) low = row[k].value;
    }
    std::string names;
    for (std::size_t k = 1; low && k < row.size(); ++k) {
      if (row[k].value && *row[k].value == *low) names += (names.empty() ? "" : ", ") + column_keys[k - 1];
    }
    row.push_back(Cell::string(names));
  }
  t.notes.push_back("cells: the peak of each run (" + std::string(metric_info(c.metric).name) + ")" +
                    (repeated ? "; repeated runs: the median, then (min\u2013max)" : "") + "; - : no such run");
  d.tables.push_back(std::move(t));
  return d;
}

}  // namespace qprof::report
