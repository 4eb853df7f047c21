// SPDX-License-Identifier: Apache-2.0
// Memory budgets: a growth allowed over a baseline, and a peak checked against a limit, said
// with the stages it was in (budgets.cpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qprof/analysis/metric.hpp"
#include "qprof/analysis/peaks.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof::analysis {

// A growth allowed over a baseline: "10%" (relative) or "200MiB" (absolute).
struct Growth {
  std::optional<double> fraction;  // 0.10 for "10%"
  std::optional<Bytes> bytes;
  Bytes limit_over(Bytes baseline) const;
  std::string text() const;  // "10%", "200.0 MiB"
};
std::optional<Growth> parse_growth(std::string_view text);

struct BudgetCheck {
  Metric metric = Metric::rss;
  Bytes limit = 0;
  Peak peak;
  std::vector<std::string> stages;  // where the peak was, innermost first; empty: outside any
  bool exceeded() const { return peak.bytes > limit; }
  Bytes over() const { return exceeded() ? peak.bytes - limit : 0; }
};

// nullopt when the trace does not have the metric.
std::optional<BudgetCheck> check_budget(const trace::Trace& trace, Metric m, Bytes limit);
// "in stage 'Calibration'", "in stage 'Layer 3' (inside 'Calibration')", "outside any stage", or
// "" when the time is unknown.
std::string where_in_stages(const std::vector<std::string>& stages, bool time_known);

}  // namespace qprof::analysis
