// SPDX-License-Identifier: Apache-2.0
// The tree's cumulative I/O and CPU time, and Σ of its processes' RSS high-water marks, counting
// processes that are gone: a reaped child's I/O and CPU time move into its parent's counters
// (the parent is a member, or qprof, which then keeps them here), so the totals never decrease.
//
// Σ VmHWM is an upper bound of the tree's peak only if every process counts with its true peak,
// growth after its last reading included, in every stats window it was alive in (hwm_bound.hpp:
// only processes alive together are summed). A process qprof reaps counts with the larger of its
// last VmHWM and its wait4 ru_maxrss, or, where that figure can be a reaped child's (own_peak),
// with its last reading and the faults since. A process reaped by its own parent (a member) is gone
// before qprof can ask the kernel: the parent's RUSAGE_CHILDREN (ru_maxrss of wait4 when qprof
// reaps that parent, or the ancestor qprof reaps) is at least its peak, so it counts with the
// larger of its last VmHWM and that figure. Until such an ancestor is reaped it is uncovered.
#pragma once

#include <sys/resource.h>

#include <deque>
#include <optional>
#include <unordered_map>
#include <vector>

#include "qprof/record/hwm_bound.hpp"
#include "qprof/record/proc_tree.hpp"

namespace qprof::record {

class TreeAccounting {
 public:
  explicit TreeAccounting(double ticks_per_second);

  struct Totals {
    trace::IoSample io;  // t unused
    double cpu_seconds = 0;
    Bytes hwm_sum = 0;          // an upper bound of the tree's peak RSS while `uncovered` is 0
    std::size_t uncovered = 0;  // processes reaped by a parent that qprof has not reaped (yet)
    // Processes counted with an ancestor's wait4 peak above their own last reading: that peak
    // may have come long after them (a shim's helpers, then the program it execs), so the bound
    // is loose by as much.
    std::size_t capped = 0;
  };

  // Reads every member's CPU time, I/O and VmHWM; returns the tree's totals so far.
  // Members are read in the order they joined, parents before children, so that a reap
  // racing with the reads can only undercount for a moment (the totals never go down).
  const Totals& read(std::vector<Member>& members);
  // Before qprof reaps a member (a zombie still reads): its final I/O counters.
  void before_reap(Member& m);
  // After: its exact CPU time and peak from wait4, its waited-for descendants included. The
  // descendants it reaped must have left (left()) before: their readings tell whether the peak
  // is theirs or its own.
  void after_reap(Member& m, const rusage& usage);
  // qprof reaped a process of the tree that never became a member (it lived and died between
  // two scans): what it used still counts.
  void reaped_unseen(const trace::IoSample& io, const rusage& usage);
  // A member that left the tree. If qprof did not reap it, its parent (a member) now holds its
  // I/O and CPU time; its high-water mark is kept here either way.
  void left(const Member& m);

  const Totals& totals() const { return totals_; }
  // At the end: the last window closed with the members still there, so that the departures
  // since the last read count in the bound.
  void close(const std::vector<Member>& members);
  // CPU time and I/O count from now: what `members` used so far is left out (qprof attach).
  void count_from_now(std::vector<Member>& members);

 private:
  // A member that its own parent reaped, waiting for an ancestor's wait4 figure.
  struct Pending {
    pid_t pid;
    pid_t ppid;
    Bytes hwm;
    HwmBound::Range windows;  // where it counts with `hwm` until its cap is known
  };
  // A process's cap is known (ru_maxrss of wait4: at least the peak of the process and of its
  // reaped descendants): its pending children take it, then theirs, and so on down the tree,
  // each raising the windows it counted in by its growth over its last reading.
  void add_cap(pid_t pid, Bytes maxrss);
  // The largest last reading of the descendants reaped under `pid` (pending on it); none if
  // none was seen.
  std::optional<Bytes> largest_reaped_descendant(pid_t pid) const;
  // What a process qprof reaped counts with: its wait4 ru_maxrss, or its own last reading
  // where that figure is a reaped descendant's and the zombie's page faults allow.
  Bytes own_peak(const Member& m, Bytes maxrss) const;
  static constexpr std::uint64_t kUnknownFaults = ~std::uint64_t{0};

  double ticks_per_second_;
  Bytes page_size_;
  Totals before_;  // CPU time and I/O before count_from_now (io, cpu_seconds)
  Totals reaped_;  // what members reaped by qprof used (hwm: of every member that left)
  Totals totals_;
  // By parent PID, so that a cap finds its children at once: a shell that runs 100 000 short
  // commands leaves that many here until it is reaped itself.
  std::unordered_map<pid_t, std::vector<Pending>> pending_;
  std::size_t pending_count_ = 0;
  HwmBound bound_;
  // Recent caps by PID: a cap matters to processes that leave soon after it (the parent's reap
  // and the children's departure are seen in the same pass), so only the latest are kept.
  std::unordered_map<pid_t, Bytes> caps_;
  std::deque<pid_t> cap_order_;
};

}  // namespace qprof::record
