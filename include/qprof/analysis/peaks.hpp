// SPDX-License-Identifier: Apache-2.0
// The peaks of a run: of each metric (and its bracket), inside stages, of each process, and
// each stage's duration and figures (peaks.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qprof/analysis/metric.hpp"
#include "qprof/analysis/timeline.hpp"
#include "qprof/trace/bracket.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof::analysis {

struct Peak {
  Bytes bytes = 0;
  std::optional<Seconds> t;  // when it was sampled (Unix s); unknown for figures the kernel kept
  bool exact = false;        // the kernel's own high-water mark, not a sample
};

// nullopt when the trace does not have the metric. hwm_sum obeys the bracket (peak_bracket).
std::optional<Peak> find_peak(const trace::Trace& trace, Metric m);
// What the peak of `m` is in this trace, in words: the metric's own description, except that a
// Σ VmHWM that cannot be bounded (a member reaped out of qprof's sight) is not called a bound.
std::string peak_meaning(const trace::Trace& trace, Metric m);

// The bracket of the tree's peak (trace/bracket.hpp) from a trace's PEAK lines and samples:
// upper is absent when the trace has no Σ VmHWM that is a bound (a trace cut short, or
// processes it could not cover: PEAK hwm_sum_partial).
trace::BracketInputs bracket_inputs(const trace::Trace& trace);
trace::PeakBracket peak_bracket(const trace::Trace& trace);
// The peak inside every run of the stage `name`: the samples between its start and end markers,
// both marker samples included (for rss, the memory the markers carry counts too). nullopt when
// no sample falls inside.
std::optional<Peak> stage_peak(const trace::Trace& trace, Metric m, std::string_view name);

struct ChildPeak {
  std::int64_t pid = 0;
  Bytes bytes = 0;
};
// RSS peak of each process recorded with -M (CHLD lines), in first-seen order; only samples
// inside the windows when some are given.
std::vector<ChildPeak> child_peaks(const trace::Trace& trace, const std::vector<TimeWindow>& windows = {});

struct StageStats {
  trace::Stage stage;
  Seconds start = 0;  // relative to the trace's start
  Seconds end = 0;
  Seconds duration = 0;
  double share = 0;               // duration / trace duration
  std::optional<Peak> peak;       // inside the stage
  std::optional<Bytes> at_start;  // the metric at the start marker (rss: the marker's own sample)
  std::optional<Bytes> at_end;
};

// One entry per stage, in order of start. `m` has instantaneous samples (MetricInfo::windowed): a
// precondition, asserted; every command checks it first and says why it cannot use the metric.
std::vector<StageStats> stage_stats(const trace::Trace& trace, Metric m = Metric::rss);

}  // namespace qprof::analysis
