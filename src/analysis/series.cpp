// SPDX-License-Identifier: Apache-2.0
#include "series.hpp"

#include <algorithm>
#include <cmath>

#include "qprof/common/units.hpp"
#include "qprof/trace/format.hpp"
#include "qprof/analysis/dirs.hpp"
#include "series.hpp"

namespace qprof::analysis::detail {
using trace::MemSample;
using trace::Stage;
using trace::Trace;
using trace::WatchedDir;

std::optional<Bytes> peak_line(const Trace& t, std::string_view name) {
  const auto it = t.peaks.find(std::string(name));
  if (it == t.peaks.end()) return std::nullopt;
  return it->second;
}

// The highest sample; the first one when several are equal.
std::optional<MemSample> highest(const std::vector<MemSample>& series) {
  if (series.empty()) return std::nullopt;
  return *std::max_element(series.begin(), series.end(),
                           [](const MemSample& a, const MemSample& b) { return a.bytes < b.bytes; });
}

// The samples of a time-ordered series inside a window, found by binary search.
std::pair<std::vector<MemSample>::const_iterator, std::vector<MemSample>::const_iterator> samples_in(
    const std::vector<MemSample>& series, const TimeWindow& w) {
  const auto first = std::lower_bound(series.begin(), series.end(), w.from - kTimeSlack,
                                      [](const MemSample& s, Seconds v) { return s.t < v; });
  const auto last =
      std::upper_bound(first, series.end(), w.to + kTimeSlack, [](Seconds v, const MemSample& s) { return v < s.t; });
  return {first, last};
}

bool in_any(const std::vector<TimeWindow>& windows, Seconds t) {
  return std::any_of(windows.begin(), windows.end(), [t](const TimeWindow& w) { return w.contains(t); });
}

TimeWindow window_of(const Stage& s) { return {s.t_start, s.t_end}; }

// The latest sample at or before t (with the slack), if any: of a marker's checkpoint, which
// reads the tree as the marker arrives and again in its stats pass, all timed at the marker, the
// last (the reduced reader keeps the latest record at or before each marker, and gives the same).
std::optional<Bytes> value_at(const std::vector<MemSample>& series, Seconds t) {
  const auto it = std::upper_bound(series.begin(), series.end(), t + kTimeSlack,
                                   [](Seconds v, const MemSample& s) { return v < s.t; });
  if (it == series.begin()) return std::nullopt;
  return std::prev(it)->bytes;
}

// The highest sample inside any of the stages (a stage can run several times). For rss
// (AtMarker::stage_memory) the memory at the markers counts too: it is the stage's own (an mprof
// FUNC line measures it itself).
std::optional<Peak> peak_in_stages(const std::vector<MemSample>& series, Metric m,
                                   const std::vector<const Stage*>& stages) {
  std::optional<Peak> best;
  auto consider = [&](Bytes b, Seconds when) {
    if (!best || b > best->bytes) best = Peak{b, when, false};
  };
  const bool own_memory = metric_row(m.kind).at_marker == AtMarker::stage_memory;
  for (const Stage* s : stages) {
    if (own_memory) {
      consider(s->mem_start, s->t_start);
      consider(s->mem_end, s->t_end);
    }
    const auto [first, last] = samples_in(series, window_of(*s));
    for (auto it = first; it != last; ++it) consider(it->bytes, it->t);
  }
  return best;
}

PickContext pick_context(const Trace& t, Metric m) {
  PickContext c;
  c.cgroup = !t.cgroup.empty();
  if (m.kind == MetricKind::dir) {
    std::string name;
    if (const WatchedDir* d = dir_metric_info(m, &name) ? find_watched_dir(t, name) : nullptr) c.dir = d->index;
  }
  return c;
}

double round_to(double v, double step) { return std::round(v / step) * step; }

namespace {

// The samples `pick` finds among one kind of line, appended.
template <class Sample>
void append_picked(const std::vector<Sample>& lines, Pick<Sample> pick, const PickContext& c,
                   std::vector<MemSample>& out) {
  if (!pick) return;
  out.reserve(out.size() + lines.size());
  for (const Sample& s : lines) {
    if (const auto v = pick(s, c)) out.push_back({s.t, *v});
  }
}

}  // namespace

// A series takes its samples from one kind of line in a given trace (metric_table.hpp): the
// picks, appended kind after kind, keep the file's order.
std::vector<MemSample> series_as_written(const Trace& t, Metric m) {
  const SamplePicks& p = metric_row(m.kind).picks;
  const PickContext c = pick_context(t, m);
  std::vector<MemSample> out;
  append_picked(t.mem, p.mem, c, out);
  append_picked(t.hwm, p.hwm, c, out);
  append_picked(t.pss, p.pss, c, out);
  append_picked(t.cgroup, p.cgroup, c, out);
  append_picked(t.kinds, p.kinds, c, out);
  append_picked(t.dir_samples, p.dir, c, out);
  if (p.gpu) {
    GpuTotals totals;
    const auto keep = [&out](const MemSample& s) { out.push_back(s); };
    for (const trace::GpuSample& s : t.gpu) totals.add(s, keep);
    totals.finish(keep);
  }
  return out;
}

}  // namespace qprof::analysis::detail
