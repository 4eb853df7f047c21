// SPDX-License-Identifier: Apache-2.0
// A sweep's tables: one row per value run with each figure (the median of its repeats, min–max),
// and the model of each figure against the parameter: its formula, R², the prediction at a value
// not run (--at) and the largest value whose prediction fits a limit (--limit).
#pragma once

#include <optional>
#include <string>

#include "qprof/analysis/sweep_model.hpp"
#include "qprof/report/report.hpp"

namespace qprof::report {

struct SweepModelOptions {
  std::optional<double> at;    // predict each figure at this value
  std::optional<Bytes> limit;  // solve the footprint (else Σ RSS peak) for this size
  std::string limit_source;    // "--limit", or where the limit in force came from (cgroup, memtotal, …)
  bool rss = false;            // --metric rss: the limit solved on Σ RSS's peak, mprof's figure
};

// The figure a limit is solved on and --plot draws: qprof fit's full-speed limit where the runs
// were fitted (sweep --fit: what the job needs to run unslowed under a limit), else the footprint,
// else Σ RSS's peak (`rss`, --metric rss: Σ RSS's peak first); null where none has two values.
const analysis::FigureModel* limit_figure(const analysis::SweepModel& m, bool rss = false);

// "50.0 MiB + 30.0 MiB × workers", "2.00 MiB × workers^2.00", "1.20 s + 0.300 s × workers"
std::string formula_words(const analysis::FigureModel& f, const std::string& parameter);
// "workers ≤ 15 fit 500.0 MiB (footprint (Σ PSS peak) 50.0 MiB + 30.0 MiB × workers, R² 0.998)";
// nullopt without a fitted size figure or a limit. Also when the model does not rise with the
// parameter, it says so instead of a bound.
std::optional<std::string> solved_words(const analysis::SweepModel& m, const SweepModelOptions& o);

// Tables "sweep_points" and "sweep_model" (and the sentence as a note and a fact) added to `doc`.
void add_sweep_model(Document& doc, const analysis::SweepModel& m, const SweepModelOptions& o);

}  // namespace qprof::report
