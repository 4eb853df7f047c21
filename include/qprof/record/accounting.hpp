// The tree's cumulative I/O and CPU time, and Σ of its processes' RSS high-water marks, counting
// processes that are gone: a reaped child's I/O and CPU time move into its parent's counters
// (the parent is a member, or qprof, which then keeps them here), so the totals never decrease.
#pragma once

#include <sys/resource.h>

#include <vector>

#include "qprof/record/proc_tree.hpp"

namespace qprof {

class TreeAccounting {
 public:
  explicit TreeAccounting(double ticks_per_second);

  struct Totals {
    IoSample io;        // t unused
    double cpu_seconds = 0;
    Bytes hwm_sum = 0;  // an upper bound of the tree's peak RSS
  };

  // Reads every member's CPU time, I/O and VmHWM; returns the tree's totals so far.
  // Members are read in the order they joined, parents before children, so that a reap
  // racing with the reads can only undercount for a moment (the totals never go down).
  const Totals& read(std::vector<Member>& members);
  // Before qprof reaps a member (a zombie still reads): its final I/O counters.
  void before_reap(Member& m);
  // After: its exact CPU time and peak from wait4, its waited-for descendants included.
  void after_reap(Member& m, const rusage& usage);
  // qprof reaped a process of the tree that never became a member (it lived and died between
  // two scans): what it used still counts.
  void reaped_unseen(const IoSample& io, const rusage& usage);
  // A member that left the tree. If qprof did not reap it, its parent (a member) now holds its
  // I/O and CPU time; its high-water mark is kept here either way.
  void left(const Member& m);

  const Totals& totals() const { return totals_; }

 private:
  double ticks_per_second_;
  Totals reaped_;  // what members reaped by qprof used (hwm: of every member that left)
  Totals totals_;
};

}  // namespace qprof
