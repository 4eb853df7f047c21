// SPDX-License-Identifier: Apache-2.0
// qprof compare's budgets: each row's verdict for the table, and what exceeded and where on stderr.
#include <algorithm>
#include <iostream>

#include "compare_cli.hpp"
#include "qprof/analysis/budgets.hpp"
#include "qprof/analysis/dirs.hpp"
#include "qprof/common/units.hpp"
#include "stderr_speaker.hpp"

namespace qprof::cli {
using analysis::budget_bytes;
using analysis::check_rows;
using analysis::CompareEntry;
using analysis::Comparison;
using analysis::Growth;
using analysis::metric_info;
using analysis::parse_growth;
using analysis::RowCheck;
using trace::Trace;

// The budgets' verdicts: a column for the table, and what exceeded and where on stderr; fails on
// --max-peak PCT for a trace that records no limit.
Result<Verdicts> check_budgets(const CompareCli& o, const std::vector<CompareEntry>& entries, const Comparison& c) {
  Verdicts v;
  v.rows.resize(entries.size());
  if (o.max_peak.empty() && o.max_growth.empty()) return v;
  // A size is every row's budget; a percentage is each row's share of the limit its traces
  // recorded (the tightest of its runs).
  std::vector<std::optional<Bytes>> max_peaks(entries.size());
  if (!o.max_peak.empty()) {
    for (std::size_t r = 0; r < entries.size(); ++r) {
      for (const Trace* run : entries[r].runs) {
        const Result<Bytes> b = budget_bytes(o.max_peak, *run);
        if (!b) return b.failure();
        max_peaks[r] = std::min(max_peaks[r].value_or(*b), *b);
      }
    }
  }
  const std::optional<Growth> growth = o.max_growth.empty() ? std::nullopt : parse_growth(o.max_growth);
  const std::vector<RowCheck> checks = check_rows(c, max_peaks, growth, !o.baseline.empty());
  const std::string metric(metric_info(c.metric).name);
  const std::string title = "peak " + std::string(metric_info(c.metric).title);
  const Speaker say = stderr_speaker("compare");
  for (std::size_t r = 0; r < entries.size(); ++r) {
    const RowCheck& rc = checks[r];
    report::RowBudget& b = v.rows[r];
    if (!rc.checked) continue;
    const std::string& label = entries[r].label;
    if (!rc.known) {
      b.text = "not checked: no " + metric;
      v.unknown = true;
      say.line("budget not checked for " + label + ": it or the first row has no " + metric);
      continue;
    }
    const std::string value =
        human_bytes(rc.value) +
        (entries[r].runs.size() > 1 ? " (median of " + std::to_string(entries[r].runs.size()) + " runs)" : "");
    if (rc.over_max_peak) {
      const Bytes budget = *max_peaks[r];
      const double frac = budget ? static_cast<double>(*rc.over_max_peak) / static_cast<double>(budget) : 0.0;
      const std::string of_limit =
          o.max_peak.find('%') != std::string::npos ? " (" + o.max_peak + " of its limit)" : "";
      b.text = "over --max-peak by " + human_bytes(*rc.over_max_peak) + " (" + percent(frac) + ")";
      say.line("memory budget exceeded: " + label + ": " + title + " " + value + " exceeds the budget of " +
               human_bytes(budget) + of_limit + " by " + human_bytes(*rc.over_max_peak) + " (" + percent(frac) + ")" +
               where_of_row(entries[r], c.metric));
    }
    if (rc.over_growth) {
      b.text += (b.text.empty() ? "" : "; ") + percent(rc.growth) + " over the baseline";
      say.line("memory budget exceeded: " + label + ": " + title + " " + value + " is " + percent(rc.growth) +
               " against the baseline " + entries[0].label + " (" + human_bytes(rc.baseline) + "), more than the " +
               growth->text() + " allowed, by " + human_bytes(*rc.over_growth) + where_of_row(entries[r], c.metric));
    }
    b.over = rc.over();
    v.over = v.over || b.over;
    if (!b.over) b.text = "ok";
  }
  return v;
}

}  // namespace qprof::cli
