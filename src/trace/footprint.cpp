// SPDX-License-Identifier: Apache-2.0
#include "qprof/trace/footprint.hpp"

#include <algorithm>

#include "qprof/trace/format.hpp"

namespace qprof::trace {

std::string_view basis_name(Footprint::Basis b) { return b == Footprint::Basis::cgroup ? "cgroup charge" : "Σ PSS"; }

std::optional<Bytes> cgroup_unreclaimable(std::optional<Bytes> from_parts, std::optional<Bytes> from_pss, Bytes peak) {
  if (!from_parts && !from_pss) return std::nullopt;
  return std::min(std::max(from_parts.value_or(0), from_pss.value_or(0)), peak);
}

namespace {

std::optional<Footprint> from_cgroup(const Trace& t) {
  if (t.cgroup.empty()) return std::nullopt;
  Footprint f;
  f.basis = Footprint::Basis::cgroup;
  const auto largest = std::max_element(t.cgroup.begin(), t.cgroup.end(),
                                        [](const CgroupSample& a, const CgroupSample& b) { return a.usage < b.usage; });
  f.peak = largest->usage;
  f.t = largest->t;
  // The kernel's high-water mark sees between samples; it has no moment.
  for (const CgroupSample& s : t.cgroup) {
    if (s.peak > f.peak) {
      f.peak = s.peak;
      f.t.reset();
    }
  }
  if (const auto it = t.peaks.find(std::string(trace::kPeakCgroup)); it != t.peaks.end() && it->second > f.peak) {
    f.peak = it->second;
    f.t.reset();
  }
  // A window's peak (CGPEAK, read at a checkpoint) is the kernel's too.
  for (const MemSample& w : t.cgroup_windows) {
    if (w.bytes > f.peak) {
      f.peak = w.bytes;
      f.t.reset();
    }
  }
  // The charge is read at every sample, its parts (memory.stat) with the stats: the page cache
  // of the largest reading that has them. Shared memory is charged as page cache, yet only swap
  // could free it: it counts as unreclaimable (CgroupSample::unreclaimable).
  const CgroupSample* with_parts = nullptr;
  for (const CgroupSample& s : t.cgroup) {
    if (const auto u = s.unreclaimable()) f.unreclaimable = std::max(f.unreclaimable.value_or(0), *u);
    if (s.file && (with_parts == nullptr || s.usage > with_parts->usage)) with_parts = &s;
  }
  std::optional<Bytes> pss_unreclaimable;
  for (const PssSample& s : t.pss) {
    if (s.unreclaimable) pss_unreclaimable = std::max(pss_unreclaimable.value_or(0), *s.unreclaimable);
  }
  f.unreclaimable = cgroup_unreclaimable(f.unreclaimable, pss_unreclaimable, f.peak);
  if (with_parts != nullptr && near_peak(with_parts->usage, f.peak)) f.reclaimable = with_parts->droppable_cache();
  return f;
}

std::optional<Footprint> from_pss(const Trace& t) {
  const PssSample* peak = nullptr;
  for (const PssSample& s : t.pss) {
    if (s.pss > 0 && (peak == nullptr || s.pss > peak->pss)) peak = &s;
  }
  if (peak == nullptr) return std::nullopt;
  Footprint f;
  f.basis = Footprint::Basis::pss;
  f.peak = peak->pss;
  f.t = peak->t;
  if (peak->unreclaimable) f.reclaimable = peak->pss - std::min(peak->pss, *peak->unreclaimable);
  for (const PssSample& s : t.pss) {
    if (s.unreclaimable) f.unreclaimable = std::max(f.unreclaimable.value_or(0), *s.unreclaimable);
  }
  return f;
}

}  // namespace

std::optional<Footprint> footprint_of(const Trace& t) {
  if (auto f = from_cgroup(t)) return f;
  return from_pss(t);
}

}  // namespace qprof::trace
