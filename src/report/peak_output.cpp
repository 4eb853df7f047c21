// SPDX-License-Identifier: Apache-2.0
// `qprof peak`'s output: mprof peak's lines, the bare value for $(…), and JSON.
#include <cmath>
#include <nlohmann/json.hpp>

#include "qprof/trace/oom.hpp"
#include "qprof/common/number_text.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/report/report.hpp"

namespace qprof::report {
using analysis::available_metrics;
using analysis::child_peaks;
using analysis::ChildPeak;
using analysis::find_peak;
using analysis::has_metric;
using analysis::Metric;
using analysis::metric_info;
using analysis::metric_names;
using analysis::MetricInfo;
using analysis::relative_time;
using analysis::stage_names;
using analysis::stage_peak;
using analysis::stages_at;
using analysis::stages_named;
using analysis::TimeWindow;
using trace::Stage;
using trace::Trace;

std::string missing_metric(const Trace& trace, Metric m) {
  return trace.source + " has no " + std::string(metric_info(m).name) +
         " (it has: " + metric_names(available_metrics(trace)) + ")";
}

PeakLine peak_line(const Trace& t, Metric metric, const std::string& stage, bool children) {
  PeakLine l;
  l.file = t.source;
  l.metric = metric;
  l.stage_scope = stage;
  l.unread_processes = t.unread_processes;
  for (const trace::OomKill& k : t.oom_kills) l.oom_kills.push_back(trace::describe_oom_kill(k, t.t0()));
  const MetricInfo& info = metric_info(l.metric);
  if (!has_metric(t, l.metric)) {
    l.error = missing_metric(t, l.metric);
    return l;
  }
  std::vector<TimeWindow> windows;
  if (!stage.empty()) {
    if (!info.windowed) {
      l.error = std::string(info.name) + " has no samples over time, so it has no peak inside a stage";
      return l;
    }
    const auto stages = stages_named(t, stage);
    if (stages.empty()) {
      std::string names;
      for (const std::string& n : stage_names(t)) names += (names.empty() ? "'" : ", '") + n + "'";
      l.error = t.source + " has no stage '" + stage + "' (" +
                (names.empty() ? "it has no stages" : "stages: " + names) + ")";
      return l;
    }
    for (const Stage* s : stages) windows.push_back({s->t_start, s->t_end});
    l.peak = stage_peak(t, l.metric, stage);
    if (!l.peak) {
      l.error = t.source + " has no " + std::string(info.name) + " sample inside stage '" + stage + "'";
      return l;
    }
  } else {
    l.peak = find_peak(t, l.metric);
  }
  if (l.peak->t) {
    l.relative_t = relative_time(t, *l.peak->t);
    for (const Stage* s : stages_at(t, *l.peak->t)) l.where.push_back(s->name);
  }
  if (children) l.children = child_peaks(t, windows);
  return l;
}

std::string peak_value(Bytes b, Unit unit, bool mprof_style) {
  if (unit == Unit::B) return std::to_string(b) + " B";
  return printf_number(mprof_style ? "%.3f" : "%.1f", in_unit(b, unit)) + " " + std::string(unit_name(unit));
}

std::string peak_lines(const std::vector<PeakLine>& lines, Unit unit, bool with_file) {
  std::string out;
  for (const PeakLine& l : lines) {
    if (!l.peak) continue;
    out += (with_file ? terminal_text(l.file) + "\t" : "") + peak_value(l.peak->bytes, unit, with_file) + "\n";
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
    o["kernel_high_water_mark"] = l.peak->exact;
    o["complete"] = l.unread_processes == 0;
    if (l.unread_processes > 0) o["unread_processes"] = l.unread_processes;
    if (!l.oom_kills.empty()) {
      o["oom_kills"] = ordered_json::array();
      for (const std::string& k : l.oom_kills) o["oom_kills"].push_back(valid_utf8(k));
    }
    o["time"] = l.peak->t ? ordered_json(*l.peak->t) : ordered_json(nullptr);
    o["relative_time_s"] = l.relative_t ? ordered_json(std::round(*l.relative_t * 1e6) / 1e6) : ordered_json(nullptr);
    o["stage"] = l.where.empty() ? ordered_json(nullptr) : ordered_json(l.where.front());
    o["stages"] = l.where;
    if (!l.children.empty()) {
      ordered_json children = ordered_json::array();
      for (const ChildPeak& c : l.children)
        children.push_back({{"pid", c.pid}, {"bytes", c.bytes}, {"value", in(c.bytes)}});
      o["children"] = std::move(children);
    }
    all.push_back(std::move(o));
  }
  const ordered_json& out = single && all.size() == 1 ? all.front() : all;
  return out.dump(2, ' ', false, ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace qprof::report
