// SPDX-License-Identifier: Apache-2.0
// What a memory budget says when it is checked.
#include <cstdio>

#include "qprof/common/safe_text.hpp"
#include "qprof/report/report.hpp"

namespace qprof::report {
using analysis::BudgetCheck;
using analysis::metric_info;
using analysis::relative_time;
using analysis::where_in_stages;
using trace::Trace;

std::string budget_message(const Trace& trace, const BudgetCheck& c) {
  std::string out = "peak " + std::string(metric_info(c.metric).title) + " " + human_bytes(c.peak.bytes);
  if (!c.exceeded()) return out + " is within the budget of " + human_bytes(c.limit);
  out += " exceeds the budget of " + human_bytes(c.limit) + " by " + human_bytes(c.over());
  if (c.limit > 0) {
    char pct[32];
    std::snprintf(pct, sizeof pct, " (+%.1f%%)", 100.0 * static_cast<double>(c.over()) / static_cast<double>(c.limit));
    out += pct;
  }
  if (c.peak.t) {
    out += ", at " + human_seconds(relative_time(trace, *c.peak.t)) + ", " +
           terminal_text(where_in_stages(c.stages, true));
  }
  return out;
}

}  // namespace qprof::report
