// SPDX-License-Identifier: Apache-2.0
#include "trend_yaml.hpp"

#include <charconv>

#include "qprof/analysis/trend.hpp"

namespace qprof::report::detail {
using analysis::run_trends;
using analysis::SeriesTrend;
using analysis::Trend;
using trace::Trace;

namespace {

// Fixed notation, as the rest of the report writes its numbers: a float for every YAML reader.
std::string fixed(double v, int decimals) {
  char buf[64];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  std::string s(buf, r.ptr);
  if (s.find('.') == std::string::npos) return s + ".0";
  while (s.back() == '0') s.pop_back();
  if (s.back() == '.') s += '0';
  if (s == "-0.0") s = "0.0";
  return s;
}

}  // namespace

void emit_trends(YAML::Emitter& e, const Trace& trace) {
  const std::vector<SeriesTrend> trends = run_trends(trace);
  if (trends.empty()) return;
  e << YAML::Key << "trend" << YAML::Value << YAML::BeginMap;
  for (const SeriesTrend& s : trends) {
    const Trend& t = s.trend;
    e << YAML::Key << s.key << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "slope_mb_per_min" << YAML::Value << fixed(t.bytes_per_second() * 60 / (1024.0 * 1024.0), 3);
    e << YAML::Key << "r2" << YAML::Value << fixed(t.fit.r2, 4);
    e << YAML::Key << "from_secs" << YAML::Value << fixed(t.from, 3);
    e << YAML::Key << "to_secs" << YAML::Value << fixed(t.to, 3);
    e << YAML::Key << "samples" << YAML::Value << t.samples;
    e << YAML::Key << "significant" << YAML::Value << t.significant;
    e << YAML::EndMap;
  }
  e << YAML::EndMap;
}

}  // namespace qprof::report::detail
