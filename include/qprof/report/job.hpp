// SPDX-License-Identifier: Apache-2.0
// A distributed job's traces (one per rank) reported as one: `qprof report --sum` and
// `qprof peak --sum` / `--by-host`.
#pragma once

#include <string>
#include <vector>

#include "qprof/analysis/job.hpp"
#include "qprof/report/report.hpp"

namespace qprof::report {

// Facts of the job (its ranks' OOM kills first, traces, hosts, job id, launcher, world size, the job's peak and when,
// the alignment, clock skew), then tables: "ranks" (a row per trace: its peak, its value at the job's peak, the highest
// peak flagged), "hosts" (the peak of each host's sum) and "stages" (across ranks: earliest start to latest end, the
// slowest rank). CSV: the ranks table.
Document job_report(const std::vector<const trace::Trace*>& traces, analysis::Metric metric, analysis::Align align);

// Each OOM kill of the ranks in words, the rank first: "rank 1 (vm): process 42 (python3, the
// command) at 287 ms, …", its time from the rank's own start. Said by every job view: a rank
// killed holds nothing after, and the job's sum can stay under the limit that killed it.
std::vector<std::string> rank_oom_kills(const std::vector<const trace::Trace*>& traces);

// `qprof peak --sum`: "job (N traces)<TAB>PEAK"; with `by_host` one line per host instead,
// "HOST (N traces)<TAB>PEAK". Peaks in `unit`, 3 decimals as mprof peak prints.
std::string job_peak_lines(const std::vector<const trace::Trace*>& traces, analysis::Metric metric,
                           analysis::Align align, bool by_host, Unit unit);
// The same as JSON: {"traces": N, "bytes", "value", "unit", "time_s", "ranks": [...]} or, by host,
// an array of such objects with "host".
std::string job_peak_json(const std::vector<const trace::Trace*>& traces, analysis::Metric metric,
                          analysis::Align align, bool by_host, Unit unit);

}  // namespace qprof::report
