// SPDX-License-Identifier: Apache-2.0
// The answer to "how much memory does this job need": the tree's footprint, every page counted
// once however many processes map it, with the part that cannot be dropped and read again.
#pragma once

#include <optional>
#include <string_view>

#include "qprof/trace/trace.hpp"

namespace qprof::trace {

struct Footprint {
  // cgroup: the peak of the charge of the tree's own memory cgroup (the kernel's high-water mark,
  // page cache included: what a cgroup limit sees, for the cache as it was when the job began);
  // pss: the peak of Σ PSS over the passes (mapped pages only, shared ones split between sharers).
  enum class Basis { cgroup, pss };
  Basis basis = Basis::pss;
  Bytes peak = 0;
  std::optional<Seconds> t;  // when the peak was read (the kernel's high-water mark has no moment)
  // The largest unreclaimable part (anonymous + shared memory) over the run, read at its own moment.
  std::optional<Bytes> unreclaimable;
  // Page cache (cgroup) or mapped files (PSS) at the peak's reading: what the kernel could drop.
  std::optional<Bytes> reclaimable;
};

std::string_view basis_name(Footprint::Basis b);  // "cgroup charge", "Σ PSS"

// On the cgroup basis: the parts (memory.stat) come with the stats and at the charge's rises, so
// with a long interval they may all lie far from the peak (0 B unreclaimable for a 104 MiB heap,
// read at the start and after the exit). The PSS passes read the tree's anonymous and shared
// memory on their own schedule: the unreclaimable part is the largest of either, never above the
// peak. A reading's page cache is "at the peak" only where its charge is within a tenth of it.
std::optional<Bytes> cgroup_unreclaimable(std::optional<Bytes> from_parts, std::optional<Bytes> from_pss, Bytes peak);
inline bool near_peak(Bytes usage, Bytes peak) { return usage >= peak - peak / 10; }

// From a trace: the cgroup basis where it has CGROUP lines (qprof ran the tree in a group of its
// own), else PSS lines; nullopt where it has neither (an mprof trace, a run with --no-pss).
std::optional<Footprint> footprint_of(const Trace& t);

}  // namespace qprof::trace
