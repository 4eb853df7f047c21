// SPDX-License-Identifier: Apache-2.0
// Where a run is in time: its end, and the stages at a moment or of a name.
#include <string_view>
#include <unordered_set>
#include <algorithm>

#include "qprof/analysis/timeline.hpp"
#include "qprof/trace/stages.hpp"
#include "series.hpp"

namespace qprof::analysis {
using trace::Stage;
using trace::Trace;

using namespace detail;

Seconds trace_end(const Trace& t) {
  // Where a stage left open ends (the readers' rule), or later where a stage says so: an mprof
  // FUNC can end after the last sample.
  Seconds end = trace::open_stage_end(t.mem.empty() ? t.t0() : std::max(t.t0(), t.mem.back().t),
                                      t.markers.empty() ? std::nullopt : std::optional<Seconds>(t.markers.back().t),
                                      t.exit ? std::optional<Seconds>(t.exit->t) : std::nullopt);
  for (const Stage& s : t.stages) end = std::max(end, s.t_end);
  return end;
}

Seconds trace_duration(const Trace& t) { return trace_end(t) - t.t0(); }

Seconds relative_time(const Trace& t, Seconds when) { return std::max(0.0, when - t.t0()); }

std::vector<const Stage*> stages_at(const Trace& t, Seconds when) {
  std::vector<const Stage*> out;
  for (const Stage& s : t.stages) {
    if (window_of(s).contains(when)) out.push_back(&s);
  }
  std::stable_sort(out.begin(), out.end(), [](const Stage* a, const Stage* b) { return a->t_start > b->t_start; });
  return out;
}

std::vector<const Stage*> stages_named(const Trace& t, std::string_view name) {
  std::vector<const Stage*> out;
  for (const Stage& s : t.stages) {
    if (s.name == name) out.push_back(&s);
  }
  return out;
}

std::vector<std::string> stage_names(const Trace& t) {
  // A set beside the list: a search of the list per stage was quadratic in distinct names.
  std::vector<std::string> out;
  std::unordered_set<std::string_view> seen;
  for (const Stage& s : t.stages) {
    if (seen.insert(s.name).second) out.push_back(s.name);
  }
  return out;
}

}  // namespace qprof::analysis
