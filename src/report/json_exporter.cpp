// SPDX-License-Identifier: Apache-2.0
// JSON (nlohmann): one object; each fact a key, each table an array of row objects keyed by the
// machine keys. A cell with decorations is an object {"value", "min", "max", "ratio", "lowest"}.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "exporters.hpp"

namespace qprof::report::detail {
namespace {

using nlohmann::ordered_json;

ordered_json value_of(const Column& c, const std::optional<double>& v, const RenderOptions& options) {
  if (!v) return nullptr;
  const double x = machine_value(c, *v, options);
  if (c.kind == Kind::flag) return x != 0;
  // Whole bytes and counts as integers: exact beyond 2^53 would need them anyway. A value read from
  // a hostile trace can lie outside what the integer holds (a cast would be undefined): it stays
  // a double.
  constexpr double kTwo63 = 9223372036854775808.0;
  if ((c.kind == Kind::count || (c.kind == Kind::bytes && !options.unit)) && x >= 0 && x < 2 * kTwo63)
    return static_cast<std::uint64_t>(x);
  if (c.kind == Kind::signed_bytes && !options.unit && x >= -kTwo63 && x < kTwo63) return static_cast<std::int64_t>(x);
  return x;
}

ordered_json cell_json(const Column& c, const Cell& cell, const RenderOptions& options) {
  if (c.kind == Kind::text) return cell.text;
  if (!c.has_lowest && !c.has_ratio && !c.has_spread) return value_of(c, cell.value, options);
  ordered_json o;
  o["value"] = value_of(c, cell.value, options);
  if (c.has_spread) {
    o["min"] = value_of(c, cell.min, options);
    o["max"] = value_of(c, cell.max, options);
  }
  if (c.has_ratio) o["ratio"] = cell.ratio ? ordered_json(std::round(*cell.ratio * 1e6) / 1e6) : ordered_json(nullptr);
  if (c.has_lowest) o["lowest"] = cell.lowest;
  return o;
}

std::string key_of(const Column& c, const RenderOptions& options) {
  return machine_key(c, options) + (c.key_detail.empty() ? "" : ":" + c.key_detail);
}

class JsonExporter : public Exporter {
 public:
  std::string render(const Document& doc, const RenderOptions& options) const override {
    ordered_json out = ordered_json::object();
    for (const auto& f : doc.facts) out[key_of(f.column, options)] = cell_json(f.column, f.cell, options);
    for (const Table& t : doc.tables) {
      // A table for people only (its figures are columns of another): not in JSON.
      if (std::none_of(t.columns.begin(), t.columns.end(), [](const Column& c) { return c.machine; })) continue;
      ordered_json rows = ordered_json::array();
      for (const auto& row : t.rows) {
        ordered_json r = ordered_json::object();
        for (std::size_t i = 0; i < t.columns.size(); ++i) {
          if (t.columns[i].machine) r[key_of(t.columns[i], options)] = cell_json(t.columns[i], row[i], options);
        }
        rows.push_back(std::move(r));
      }
      out[t.name] = std::move(rows);
      if (t.rows_left_out > 0) out[t.name + "_rows_left_out"] = t.rows_left_out;
    }
    // Labels come from the traced program: invalid UTF-8 is replaced rather than thrown at.
    return out.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
  }
};

}  // namespace

std::unique_ptr<Exporter> make_json_exporter() { return std::make_unique<JsonExporter>(); }

}  // namespace qprof::report::detail
