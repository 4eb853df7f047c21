// SPDX-License-Identifier: Apache-2.0
#include "qprof/analysis/default_metric.hpp"

#include <algorithm>

namespace qprof::analysis {
using trace::Trace;

MetricChoice choose_metric(std::optional<Metric> asked, bool footprint_everywhere,
                           const std::string& without_footprint) {
  if (asked) return {*asked, {}};
  if (footprint_everywhere) return {Metric::footprint, {}};
  // A trace without PSS and without a cgroup of its own: mprof's, or recorded with --no-pss.
  return {Metric::rss, "no footprint in " + without_footprint +
                           " (recorded with --no-pss, or by mprof): the figures are \u03a3 RSS"};
}

MetricChoice choose_metric(std::optional<Metric> asked, const std::vector<const Trace*>& traces) {
  std::size_t without = 0;
  const Trace* first_without = nullptr;
  for (const Trace* t : traces) {
    if (has_metric(*t, Metric::footprint)) continue;
    if (!first_without) first_without = t;
    ++without;
  }
  std::string who = "this trace";
  if (traces.size() > 1 && without == 1 && !first_without->source.empty()) {
    who = first_without->source;
  } else if (traces.size() > 1 && without == traces.size()) {
    who = "these traces";
  } else if (traces.size() > 1) {
    who = std::to_string(without) + " of the " + std::to_string(traces.size()) + " traces";
  }
  return choose_metric(asked, !traces.empty() && without == 0, who);
}

MetricChoice choose_metric(std::optional<Metric> asked, const Trace& trace) {
  return choose_metric(asked, std::vector<const Trace*>{&trace});
}

}  // namespace qprof::analysis
