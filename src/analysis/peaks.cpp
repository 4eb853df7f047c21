// SPDX-License-Identifier: Apache-2.0
// The peaks of a run: of each metric, inside stages, of each process, and each stage's figures.
#include <algorithm>
#include <cmath>
#include <cassert>
#include <cstdio>
#include <iterator>
#include <limits>
#include <unordered_set>

#include "qprof/analysis/peaks.hpp"
#include "qprof/analysis/metric_table.hpp"
#include "qprof/analysis/timeline.hpp"
#include "qprof/trace/format.hpp"
#include "series.hpp"

namespace qprof::analysis {
using trace::BracketInputs;
using trace::CgroupSample;
using trace::ChildSeries;
using trace::make_bracket;
using trace::MemSample;
using trace::PeakBracket;
using trace::Stage;
using trace::Trace;

using namespace detail;

std::string peak_meaning(const Trace& trace, Metric m) {
  const bool hwm = metric_row(m.kind).peak == PeakRule::hwm_bound;
  const PeakBracket bracket = hwm ? peak_bracket(trace) : PeakBracket{};
  std::string what =
      hwm && !bracket.upper ? "sum of each process's peak so far, not a bound" : std::string(metric_info(m).what);
  // A bound far above the peak it bounds (run -v leaves it out) is said to be loose, and why: the
  // summary's rule (trace/bracket.hpp), so that report and YAML do not present it as a plan.
  if (hwm && bracket.upper) {
    const auto rss = highest(metric_series(trace, Metric::rss));
    if (rss && rss->bytes > 0 && !trace::bound_is_useful(*bracket.upper, rss->bytes)) {
      char ratio[32];
      std::snprintf(ratio, sizeof ratio, "%.1f", static_cast<double>(*bracket.upper) / static_cast<double>(rss->bytes));
      what += "; loose here, " + std::string(ratio) +
              "× the Σ RSS peak: processes that never ran at once are counted as if they had";
    }
  }
  if (trace.unread_processes > 0) {
    what += "; INCOMPLETE: misses " + std::to_string(trace.unread_processes) + " process(es) qprof could not read";
  }
  return what;
}

namespace {

// When the charge first stood at an exact peak `exact` between `from` and `to`: the moment of a
// sample that read it, else of the first CGROUP record whose high-water column reached it (it was
// reached since the record before). The column only rises over a run: where it already stood at
// `exact` or above in the record at the span's start, or no record was taken there, it says nothing
// about this span, and the moment is unknown. The bounds are risen_peak's, which the reduced reader
// keeps records for; `from` -infinity: the whole run.
std::optional<Seconds> charge_reached(const Trace& t, const std::optional<Peak>& sampled, Bytes exact, Seconds from,
                                      Seconds to) {
  if (sampled && sampled->t && sampled->bytes >= exact) return sampled->t;
  const std::vector<CgroupSample>& records = t.cgroup;
  const auto first_inside = std::partition_point(records.begin(), records.end(),
                                                 [&](const CgroupSample& x) { return x.t <= from + kTimeSlack; });
  if (std::isfinite(from)) {
    // As risen_peak: without a record at the span's start, a rise before it would be timed inside.
    if (first_inside == records.begin()) return std::nullopt;
    const CgroupSample& at_start = *std::prev(first_inside);
    if (at_start.t < from - kTimeSlack || at_start.peak >= exact) return std::nullopt;
  }
  for (auto it = first_inside; it != records.end() && it->t <= to + kTimeSlack; ++it) {
    if (it->peak >= exact) return it->t;
  }
  return std::nullopt;
}

constexpr Seconds kWholeRun = std::numeric_limits<Seconds>::infinity();

// The cgroup charge's peak: the kernel's high-water mark is exact and at least every usage
// sample.
Peak charge_peak(const Trace& t, const std::optional<MemSample>& sampled, Peak p) {
  Bytes kernel = peak_line(t, trace::kPeakCgroup).value_or(0);
  for (const CgroupSample& s : t.cgroup) kernel = std::max(kernel, s.peak);
  if (kernel < p.bytes || kernel == 0) return p;
  std::optional<Peak> seen;
  if (sampled) seen = Peak{sampled->bytes, sampled->t, false};
  return Peak{kernel, charge_reached(t, seen, kernel, -kWholeRun, kWholeRun), true};
}

// Σ VmHWM: the PEAK line where higher; a bound obeys the bracket (traces of older versions did
// not always).
Peak hwm_peak(const Trace& t, Peak p) {
  const auto line = peak_line(t, trace::kPeakHwmSum);
  const auto partial = peak_line(t, trace::kPeakHwmSumPartial);
  if (const auto end = line ? line : partial; end && *end > p.bytes) p = Peak{*end, std::nullopt, false};
  if (const auto b = peak_bracket(t); b.upper) p.bytes = std::max(p.bytes, *b.upper);
  return p;
}

}  // namespace

std::optional<Peak> find_peak(const Trace& t, Metric m) {
  if (!has_metric(t, m)) return std::nullopt;
  const MetricRow& row = metric_row(m.kind);
  const auto sampled = highest(metric_series(t, m));
  Peak p;
  if (sampled) p = Peak{sampled->bytes, sampled->t, false};
  if (is_charge(row, t)) return charge_peak(t, sampled, p);
  switch (row.peak) {
    case PeakRule::hwm_bound:
      return hwm_peak(t, p);
    case PeakRule::kernel_end:
      return Peak{*peak_line(t, trace::kPeakKernelProcess), std::nullopt, true};
    case PeakRule::charge:     // is_charge above
    case PeakRule::footprint:  // without a cgroup: Σ PSS, sampled
    case PeakRule::highest_sample:
      break;
  }
  return p;
}

BracketInputs bracket_inputs(const Trace& t) {
  BracketInputs in;
  in.kernel_process = peak_line(t, trace::kPeakKernelProcess);
  in.hwm_sum = peak_line(t, trace::kPeakHwmSum);
  if (const auto s = highest(metric_series(t, Metric::rss))) in.sampled_rss = s->bytes;
  if (const auto s = highest(metric_series(t, Metric::pss))) in.sampled_pss = s->bytes;
  return in;
}

PeakBracket peak_bracket(const Trace& t) { return make_bracket(bracket_inputs(t)); }

namespace {

constexpr Seconds kSameMoment = 1e-3;  // a window and its marker are written at the same time

// The cgroup charge's exact peak over a stage, from the kernel's counter read and reset at every
// checkpoint (CGPEAK lines): the stage is the union of the windows that close inside it, when a
// window closed at its start marker and another at its end marker. nullopt where the trace has no
// windows, the metric is not the charge, or the stage runs past the last window (its tail is
// sampled only).
std::optional<Bytes> window_peak(const Trace& t, Metric m, const Stage& s) {
  if (!is_charge(metric_row(m.kind), t) || t.cgroup_windows.empty() || !s.closed) return std::nullopt;
  const auto& w = t.cgroup_windows;
  const bool opens_at_start =
      std::any_of(w.begin(), w.end(), [&](const MemSample& x) { return std::abs(x.t - s.t_start) <= kSameMoment; });
  const bool closes_at_end =
      std::any_of(w.begin(), w.end(), [&](const MemSample& x) { return std::abs(x.t - s.t_end) <= kSameMoment; });
  if (!opens_at_start || !closes_at_end) return std::nullopt;
  Bytes peak = 0;
  for (const MemSample& x : w) {
    if (x.t > s.t_start + kSameMoment && x.t <= s.t_end + kSameMoment) peak = std::max(peak, x.bytes);
  }
  return peak;
}

// The metric at a stage's marker. PSS is read by a pass that the marker asks for, which ends
// after the marker's moment: its line comes before the MARK line (the marker's checkpoint holds
// it) but is timed after it, so a lookup by time would take the reading before, from before the
// marker. Every other series has a reading timed at the marker itself.
std::optional<Bytes> at_marker(const Trace& t, Metric m, const std::vector<MemSample>& series, Seconds when) {
  const AtMarker rule = metric_row(m.kind).at_marker;
  const bool pss_based =
      rule == AtMarker::pss || rule == AtMarker::uss || (rule == AtMarker::footprint && t.cgroup.empty());
  if (pss_based) {
    for (const trace::Marker& k : t.markers) {
      if (std::abs(k.t - when) > kTimeSlack) continue;
      if (const auto v = rule == AtMarker::uss ? k.at.uss : k.at.pss) return v;
    }
  }
  return value_at(series, when);
}

// The sampled peak, raised to the kernel's where a window gives it (exact then, with no moment).
// The charge read at the start marker was read before that marker's window opened: a page freed
// between the two leaves it above the window's peak. The stage's peak is then that reading, and
// exact still: the window covers the rest of the stage.
std::optional<Peak> with_window_peak(std::optional<Peak> sampled, std::optional<Bytes> exact, const Stage& s) {
  if (!exact) return sampled;
  if (!sampled || *exact >= sampled->bytes) return Peak{*exact, std::nullopt, true};
  if (sampled->t && std::abs(*sampled->t - s.t_start) <= kSameMoment) return Peak{sampled->bytes, std::nullopt, true};
  return sampled;
}

// The charge's kernel high-water mark (CGROUP's peak column) over a stage: its highest reading
// inside the stage where that is above its reading at the stage's start marker. The column only
// rises over a run (the recorder keeps the highest of its counter and of the windows it closed), and
// the recorder writes a CGROUP record at each marker's own time, so a higher reading inside is a
// height first reached inside the stage: what no sample caught, such as the charge at an OOM kill in
// a stage left open. A trace without a record at the marker gives nothing (a rise before the stage
// would be taken for one inside it). The bounds are the reduced reader's (kTimeSlack), which keeps
// the record at each stage's start and the highest inside: every reader gives the same answer.
// nullopt where the metric is not the charge or the mark did not rise inside the stage.
std::optional<Bytes> risen_peak(const Trace& t, Metric m, const Stage& s) {
  if (!is_charge(metric_row(m.kind), t)) return std::nullopt;
  // By bisection, as samples_in finds a stage's samples: the readers keep each series in time order.
  const std::vector<CgroupSample>& samples = t.cgroup;
  const auto first_inside = std::partition_point(samples.begin(), samples.end(),
                                                 [&](const CgroupSample& x) { return x.t <= s.t_start + kTimeSlack; });
  if (first_inside == samples.begin()) return std::nullopt;
  const CgroupSample& at_start = *std::prev(first_inside);
  if (at_start.t < s.t_start - kTimeSlack) return std::nullopt;  // no reading at the marker to rise from
  std::optional<Bytes> inside;
  for (auto it = first_inside; it != samples.end() && it->t <= s.t_end + kTimeSlack; ++it) {
    inside = std::max(inside.value_or(0), it->peak);
  }
  if (!inside || *inside <= at_start.peak) return std::nullopt;
  return inside;
}

// A stage's peak of `m`: sampled, raised to the kernel's counts of the charge where they say more,
// timed as the job's peak is (charge_reached) where the kernel's count gave it.
std::optional<Peak> peak_of_stage(const Trace& t, Metric m, const std::vector<MemSample>& series, const Stage& s) {
  const std::optional<Peak> sampled = peak_in_stages(series, m, {&s});
  std::optional<Peak> p = with_window_peak(sampled, window_peak(t, m, s), s);
  if (const auto risen = risen_peak(t, m, s); risen && (!p || *risen > p->bytes)) p = Peak{*risen, std::nullopt, true};
  if (p && p->exact && !p->t) p->t = charge_reached(t, sampled, p->bytes, s.t_start, s.t_end);
  return p;
}

}  // namespace

std::optional<Peak> stage_peak(const Trace& t, Metric m, std::string_view name) {
  const std::vector<const Stage*> runs = stages_named(t, name);
  const std::vector<MemSample> series = metric_series(t, m);
  std::optional<Peak> best;
  for (const Stage* s : runs) {
    const std::optional<Peak> one = peak_of_stage(t, m, series, *s);
    // Of runs with equal peaks, the kernel's exact one, and of those one with a time.
    const bool better_tie = one && best && one->bytes == best->bytes && one->exact &&
                            (!best->exact || (one->t.has_value() && !best->t.has_value()));
    if (one && (!best || one->bytes > best->bytes || better_tie)) best = one;
  }
  return best;
}

std::vector<ChildPeak> child_peaks(const Trace& t, const std::vector<TimeWindow>& windows) {
  std::vector<ChildPeak> out;
  for (const ChildSeries& c : t.children) {
    std::optional<Bytes> peak;
    for (const MemSample& s : c.samples) {
      if (!windows.empty() && !in_any(windows, s.t)) continue;
      peak = std::max(peak.value_or(0), s.bytes);
    }
    if (peak) out.push_back({c.pid, *peak});
  }
  return out;
}

std::vector<StageStats> stage_stats(const Trace& t, Metric m) {
  assert(metric_info(m).windowed && "a metric without samples over time has no peak inside a stage");
  const std::vector<MemSample> series = metric_series(t, m);
  const Seconds total = trace_duration(t);
  std::vector<StageStats> out;
  for (const Stage& s : t.stages) {
    StageStats st;
    st.stage = s;
    st.start = relative_time(t, s.t_start);
    st.end = relative_time(t, s.t_end);
    st.duration = std::max(0.0, s.t_end - s.t_start);
    st.share = total > 0 ? st.duration / total : 0.0;
    if (metric_row(m.kind).at_marker == AtMarker::stage_memory) {
      st.at_start = s.mem_start;
      st.at_end = s.mem_end;
    } else {
      st.at_start = at_marker(t, m, series, s.t_start);
      st.at_end = at_marker(t, m, series, s.t_end);
    }
    st.peak = peak_of_stage(t, m, series, s);
    out.push_back(std::move(st));
  }
  return out;
}

}  // namespace qprof::analysis
