// SPDX-License-Identifier: Apache-2.0
// CSV (RFC 4180, LF line ends): one table, machine keys as the header, exact numbers, empty
// fields for values a trace does not have. Decorations are columns of their own: KEY_min,
// KEY_max (spread over repeated runs), KEY_ratio (to the first row), KEY_lowest.
#include <cmath>

#include "exporters.hpp"
#include "qprof/common/csv_cell.hpp"
#include "qprof/common/number_text.hpp"

namespace qprof::report::detail {
namespace {

// A value the trace cannot give a number for (NaN, infinite) is an empty field, as a missing one.
std::string number(double v) { return number_text(v, ""); }

// "peak_rss_bytes" + "_ratio", with a stage's name after a colon: "stage_peak_bytes_ratio:Load".
std::string decorated(const std::string& key, const std::string& detail, const char* suffix) {
  return key + suffix + (detail.empty() ? "" : ":" + detail);
}

class CsvExporter : public Exporter {
 public:
  std::string render(const Document& doc, const RenderOptions& options) const override {
    if (doc.csv_table >= doc.tables.size()) return "";
    const Table& t = doc.tables[doc.csv_table];
    std::vector<std::string> header;
    for (const Column& c : t.columns) {
      if (!c.machine) continue;
      const std::string key = machine_key(c, options);
      header.push_back(decorated(key, c.key_detail, ""));
      if (c.has_spread) {
        header.push_back(decorated(key, c.key_detail, "_min"));
        header.push_back(decorated(key, c.key_detail, "_max"));
      }
      if (c.has_ratio) header.push_back(decorated(key, c.key_detail, "_ratio"));
      if (c.has_lowest) header.push_back(decorated(key, c.key_detail, "_lowest"));
    }
    std::string out = line(header);
    for (const auto& row : t.rows) {
      std::vector<std::string> fields;
      for (std::size_t i = 0; i < t.columns.size(); ++i) {
        const Column& c = t.columns[i];
        if (!c.machine) continue;
        const Cell& cell = row[i];
        auto value = [&](const std::optional<double>& v) { return v ? number(machine_value(c, *v, options)) : ""; };
        if (c.kind == Kind::text)
          fields.push_back(cell.text);
        else if (c.kind == Kind::flag)
          fields.push_back(cell.value ? (*cell.value != 0 ? "true" : "false") : "");
        else
          fields.push_back(value(cell.value));
        if (c.has_spread) {
          fields.push_back(value(cell.min));
          fields.push_back(value(cell.max));
        }
        if (c.has_ratio) fields.push_back(cell.ratio ? number(std::round(*cell.ratio * 1e6) / 1e6) : "");
        if (c.has_lowest) fields.push_back(cell.value ? (cell.lowest ? "true" : "false") : "");
      }
      out += line(fields);
    }
    return out;
  }

 private:
  static std::string line(const std::vector<std::string>& fields) {
    std::string out;
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (i) out += ',';
      out += csv_cell(fields[i]);  // labels are untrusted: no formula, no control character
    }
    return out + "\n";
  }
};

}  // namespace

std::unique_ptr<Exporter> make_csv_exporter() { return std::make_unique<CsvExporter>(); }

}  // namespace qprof::report::detail
