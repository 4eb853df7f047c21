// SPDX-License-Identifier: Apache-2.0
#include "trend_yaml.hpp"

#include "qprof/analysis/trend.hpp"
#include "qprof/common/number_text.hpp"

namespace qprof::report::detail {
using analysis::run_trends;
using analysis::SeriesTrend;
using analysis::Trend;
using trace::Trace;

void emit_trends(YAML::Emitter& e, const Trace& trace) {
  const std::vector<SeriesTrend> trends = run_trends(trace);
  if (trends.empty()) return;
  e << YAML::Key << "trend" << YAML::Value << YAML::BeginMap;
  for (const SeriesTrend& s : trends) {
    const Trend& t = s.trend;
    e << YAML::Key << s.key << YAML::Value << YAML::BeginMap;
    e << YAML::Key << "slope_mb_per_min" << YAML::Value << yaml_float(t.bytes_per_second() * 60 / (1024.0 * 1024.0), 3);
    e << YAML::Key << "r2" << YAML::Value << yaml_float(t.fit.r2, 4);
    e << YAML::Key << "from_secs" << YAML::Value << yaml_float(t.from, 3);
    e << YAML::Key << "to_secs" << YAML::Value << yaml_float(t.to, 3);
    e << YAML::Key << "samples" << YAML::Value << t.samples;
    e << YAML::Key << "significant" << YAML::Value << t.significant;
    e << YAML::EndMap;
  }
  e << YAML::EndMap;
}

}  // namespace qprof::report::detail
