// SPDX-License-Identifier: Apache-2.0
// The tree's memory by kind (KINDS) and its task counts and virtual size (TASKS), summed from
// the members' /proc/PID/status figures that TreeAccounting parsed on the stats schedule (the
// status text is read there for VmHWM anyway: these series cost a parse, not a read).
#pragma once

#include <optional>
#include <vector>

#include "qprof/record/proc_tree.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::record {

class UsageSeries {
 public:
  // Sums the members read at this stats pass and writes one KINDS and one TASKS line.
  // Allocation-free. Members without a valid status (gone before the read) are left out.
  void record(const std::vector<Member>& members, Seconds t, trace::Writer& out);

  // The KINDS sample whose anon + file + shmem was highest: the split at the peak.
  std::optional<trace::MemKindsSample> largest() const { return largest_; }
  std::optional<trace::TasksSample> most_tasks() const { return most_tasks_; }  // the most threads
  Bytes peak_vsz() const { return peak_vsz_; }
  Bytes peak_swap() const { return peak_swap_; }
  std::uint64_t readings() const { return readings_; }  // passes that read a live member

 private:
  std::optional<trace::MemKindsSample> largest_;
  std::optional<trace::TasksSample> most_tasks_;
  Bytes peak_vsz_ = 0;
  Bytes peak_swap_ = 0;
  std::uint64_t readings_ = 0;
};

}  // namespace qprof::record
