// `qprof peak`'s output: mprof peak's lines, the bare value for $(…), and JSON.
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "qprof/report.hpp"

namespace qprof::report {

std::string peak_value(Bytes b, Unit unit, bool mprof_style) {
  char buf[64];
  if (unit == Unit::B) {
    std::snprintf(buf, sizeof buf, "%llu B", static_cast<unsigned long long>(b));
  } else {
    std::snprintf(buf, sizeof buf, "%.*f %s", mprof_style ? 3 : 1, in_unit(b, unit), unit_name(unit).data());
  }
  return buf;
}

std::string peak_lines(const std::vector<PeakLine>& lines, Unit unit, bool with_file) {
  std::string out;
  for (const PeakLine& l : lines) {
    if (!l.peak) continue;
    out += (with_file ? l.file + "\t" : "") + peak_value(l.peak->bytes, unit, with_file) + "\n";
    for (const ChildPeak& c : l.children) {
      out += "  Child " + std::to_string(c.pid) + "\t\t\t" + peak_value(c.bytes, unit, with_file) + "\n";
    }
  }
  return out;
}

std::string peak_json(const std::vector<PeakLine>& lines, Unit unit, bool single) {
  using nlohmann::ordered_json;
  auto in = [unit](Bytes b) { return std::round(in_unit(b, unit) * 1e6) / 1e6; };
  ordered_json all = ordered_json::array();
  for (const PeakLine& l : lines) {
    ordered_json o;
    o["file"] = l.file.empty() ? ordered_json(nullptr) : ordered_json(l.file);
    o["metric"] = metric_info(l.metric).name;
    o["stage_scope"] = l.stage_scope.empty() ? ordered_json(nullptr) : ordered_json(l.stage_scope);
    if (!l.peak) {
      o["error"] = l.error;
      all.push_back(std::move(o));
      continue;
    }
    o["bytes"] = l.peak->bytes;
    o["value"] = in(l.peak->bytes);
    o["unit"] = unit_name(unit);
    o["exact"] = l.peak->exact;
    o["time"] = l.peak->t ? ordered_json(*l.peak->t) : ordered_json(nullptr);
    o["relative_time_s"] = l.relative_t ? ordered_json(std::round(*l.relative_t * 1e6) / 1e6) : ordered_json(nullptr);
    o["stage"] = l.where.empty() ? ordered_json(nullptr) : ordered_json(l.where.front());
    o["stages"] = l.where;
    if (!l.children.empty()) {
      ordered_json children = ordered_json::array();
      for (const ChildPeak& c : l.children) children.push_back({{"pid", c.pid}, {"bytes", c.bytes}, {"value", in(c.bytes)}});
      o["children"] = std::move(children);
    }
    all.push_back(std::move(o));
  }
  const ordered_json& out = single && all.size() == 1 ? all.front() : all;
  return out.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace qprof::report
