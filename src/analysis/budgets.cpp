// SPDX-License-Identifier: Apache-2.0
#include "qprof/analysis/metric.hpp"
#include "qprof/analysis/timeline.hpp"
#include "qprof/analysis/peaks.hpp"
#include "qprof/analysis/budgets.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <stdexcept>

#include "qprof/common/units.hpp"
#include "qprof/trace/format.hpp"
#include "series.hpp"

namespace qprof::analysis {
using trace::Stage;
using trace::Trace;

using namespace detail;

// ── Budgets ─────────────────────────────────────────────────────────────────────────────────

Bytes Growth::limit_over(Bytes baseline) const {
  if (fraction) return bytes_from_double(std::floor(static_cast<double>(baseline) * (1.0 + *fraction)));
  return baseline + bytes.value_or(0);
}

std::string Growth::text() const {
  if (fraction) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g%%", round_to(*fraction * 100.0, 1e-6));
    return buf;
  }
  return human_bytes(bytes.value_or(0));
}

std::optional<Growth> parse_growth(std::string_view text) {
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  if (!text.empty() && text.back() == '%') {
    text.remove_suffix(1);
    double pct = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), pct);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(pct) || pct < 0) {
      return std::nullopt;
    }
    return Growth{pct / 100.0, std::nullopt};
  }
  const auto b = parse_size(text);
  if (!b) return std::nullopt;
  return Growth{std::nullopt, *b};
}

std::optional<BudgetCheck> check_budget(const Trace& t, Metric m, Bytes limit) {
  const auto peak = find_peak(t, m);
  if (!peak) return std::nullopt;
  BudgetCheck c{m, limit, *peak, {}};
  if (peak->t) {
    for (const Stage* s : stages_at(t, *peak->t)) c.stages.push_back(s->name);
  }
  return c;
}

std::string where_in_stages(const std::vector<std::string>& stages, bool time_known) {
  if (!time_known) return "";
  if (stages.empty()) return "outside any stage";
  std::string out = "in stage '" + stages.front() + "'";
  for (std::size_t i = 1; i < stages.size(); ++i) out += (i == 1 ? " (inside '" : ", '") + stages[i] + "'";
  if (stages.size() > 1) out += ")";
  return out;
}

}  // namespace qprof::analysis
