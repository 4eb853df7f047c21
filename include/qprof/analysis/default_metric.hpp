// SPDX-License-Identifier: Apache-2.0
// The metric every decision takes when --metric is left out: the footprint (every page once,
// what a cgroup limit and Slurm's --mem hold) where the traces recorded it, else Σ RSS, said
// once. One rule for every command (default_metric.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "qprof/analysis/metric.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof::analysis {

struct MetricChoice {
  Metric metric = Metric::footprint;
  // Why the default is Σ RSS and not the footprint, for the output to say once; empty where the
  // footprint was recorded or a metric was asked for.
  std::string fallback;
};

// `asked`: the --metric given; nullopt when it was left out, and then the default: the
// footprint where every trace holds it, else Σ RSS (every trace has it, mprof's too).
MetricChoice choose_metric(std::optional<Metric> asked, const std::vector<const trace::Trace*>& traces);
MetricChoice choose_metric(std::optional<Metric> asked, const trace::Trace& trace);
// The rule itself, for readers that hold no Trace (a chart's reduced series, a listing's one
// pass): `without_footprint` names the traces that lack it ("run.dat", "2 of the 3 traces").
MetricChoice choose_metric(std::optional<Metric> asked, bool footprint_everywhere,
                           const std::string& without_footprint = "this trace");

}  // namespace qprof::analysis
