// SPDX-License-Identifier: Apache-2.0
#include <algorithm>

#include "qprof/record/session.hpp"
#include "qprof/trace/footprint.hpp"

namespace qprof::record {
using trace::Footprint;

std::optional<Footprint> footprint_of_run(const RunReport& r) {
  Footprint f;
  if (r.cgroup.peak) {
    f.basis = Footprint::Basis::cgroup;
    f.peak = *r.cgroup.peak;
    f.unreclaimable = trace::cgroup_unreclaimable(r.cgroup.unreclaimable_peak, r.pss.unreclaimable_peak, f.peak);
    f.reclaimable = r.cgroup.droppable_cache;  // at the largest usage sample, where it is near the peak
    return f;
  }
  if (!r.pss.peak || r.pss.peak->pss == 0) return std::nullopt;
  f.basis = Footprint::Basis::pss;
  f.peak = r.pss.peak->pss;
  f.t = r.pss.peak->t;
  f.unreclaimable = r.pss.unreclaimable_peak;
  if (r.pss.peak->unreclaimable) f.reclaimable = f.peak - std::min(f.peak, *r.pss.peak->unreclaimable);
  return f;
}

}  // namespace qprof::record
