// SPDX-License-Identifier: Apache-2.0
// What a memory budget says when it is checked.

#include "qprof/common/safe_text.hpp"
#include "qprof/common/number_text.hpp"
#include "qprof/report/report.hpp"
#include "qprof/trace/footprint.hpp"

namespace qprof::report {
using analysis::BudgetCheck;
using analysis::metric_info;
using analysis::relative_time;
using analysis::where_in_stages;
using trace::Trace;

namespace {

// The figure the budget held, with its basis: "footprint (Σ PSS)", "RSS".
std::string held_figure(const Trace& trace, analysis::Metric m) {
  std::string title(metric_info(m).title);
  if (m != analysis::Metric::footprint) return title;
  const auto f = trace::footprint_of(trace);
  return f ? title + " (" + std::string(trace::basis_name(f->basis)) + ")" : title;
}

}  // namespace

std::string budget_message(const Trace& trace, const BudgetCheck& c) {
  std::string out = "peak " + held_figure(trace, c.metric) + " " + human_bytes(c.peak.bytes);
  if (!c.exceeded()) return out + " is within the budget of " + human_bytes(c.limit);
  out += " exceeds the budget of " + human_bytes(c.limit) + " by " + human_bytes(c.over());
  if (c.limit > 0) {
    out += printf_number(" (+%.1f%%)", 100.0 * static_cast<double>(c.over()) / static_cast<double>(c.limit));
  }
  if (c.peak.t) {
    out += ", at " + human_seconds(relative_time(trace, *c.peak.t)) + ", " +
           terminal_text(where_in_stages(c.stages, true));
  }
  return out;
}

}  // namespace qprof::report
