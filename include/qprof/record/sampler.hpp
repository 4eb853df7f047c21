// SPDX-License-Identifier: Apache-2.0
// Samples of the tree. The fast path (`sample`) runs on the run loop's fixed-deadline schedule
// and at every marker: membership, every member's RSS, the MEM (and CHLD) lines, and the tree
// cgroup's charge (two small reads: the footprint as densely as Σ RSS); it allocates nothing
// once the tree is known. The slower path (`sample_stats`, every --stats-interval and at
// markers) adds CPU time, I/O, Σ VmHWM, the charge's parts, and the PSS/USS that the PSS thread
// measured on its own schedule.
#pragma once

#include <sys/resource.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "qprof/record/accounting.hpp"
#include "qprof/record/cgroup.hpp"
#include "qprof/common/clock.hpp"
#include "qprof/trace/format.hpp"
#include "qprof/record/proc_tree.hpp"
#include "qprof/record/pss_sampler.hpp"
#include "qprof/record/usage_series.hpp"

namespace qprof::record {

struct SamplerConfig {
  Bytes page_size = 4096;
  double ticks_per_second = 100;        // sysconf(_SC_CLK_TCK)
  bool multiprocess = false;            // CHLD lines per member, as mprof -M
  std::optional<Seconds> pss_interval;  // PSS/USS on their own thread when set
  std::string proc_root = "/proc";
  bool own_tree = true;  // qprof started the tree; false when attached (assemble_pss_pass)
};

class Sampler {
 public:
  Sampler(ProcTree& tree, trace::Writer& out, const WallAnchor& clock, SamplerConfig config,
          TreeCgroup* cgroup = nullptr);

  // The fast path: returns the tree's RSS, or nullopt (writing nothing) once the tree is empty.
  std::optional<trace::MemSample> sample(std::int64_t mono_ns);
  // The slower path; writes PSS, IO, CPU, HWM and CGROUP lines.
  void sample_stats(std::int64_t mono_ns);
  // At a marker: a PSS pass of this moment when one costs less than `budget` (else the marker
  // carries the age of the latest). The next sample_stats writes it.
  void fresh_pss(Seconds budget);
  // At a checkpoint: the kernel's exact peak of the charge since the previous one (CGPEAK), and
  // the counter reset, where the tree has a cgroup whose counter can be reset.
  void close_cgroup_window(Seconds t);
  // Updates membership without writing a sample (after a reap): newcomers join, the gone leave.
  void prune();

  // qprof attach: CPU time and I/O count from this moment (the tree's members as they are now),
  // not from the processes' start.
  void count_from_now();

  // qprof is about to reap `pid` (a zombie child) / has reaped it: keep its final figures. Call
  // prune() before a batch of reaps: the descendants a zombie reaped must have left.
  void before_reap(pid_t pid);
  void after_reap(pid_t pid, const rusage& usage);

  std::uint64_t count() const { return count_; }
  const trace::MemSample& peak() const { return peak_; }
  const trace::MemSample& last() const { return last_; }
  const TreeAccounting::Totals& totals() const { return accounting_.totals(); }
  // At the end: the departures since the last stats pass counted in Σ VmHWM's bound.
  void close_accounting() { accounting_.close(tree_.members()); }
  std::optional<trace::PssSample> latest_pss() const { return latest_pss_; }
  std::optional<trace::PssSample> peak_pss() const { return peak_pss_; }
  Bytes peak_uss() const { return peak_uss_; }
  // The largest unreclaimable part of a PSS pass (Pss_Anon + Pss_Shmem) and of a cgroup sample
  // (anon + shmem of memory.stat), each at its own moment; absent where the kernel does not split.
  std::optional<Bytes> peak_pss_unreclaimable() const { return peak_pss_unreclaimable_; }
  std::optional<Bytes> peak_cgroup_unreclaimable() const { return peak_cgroup_unreclaimable_; }
  // The footprint as of the latest stats pass (the cgroup's charge where the tree has a group of
  // its own, else Σ PSS), and its largest reading so far: for the live line.
  std::optional<Bytes> footprint_now() const { return footprint_now_; }
  Bytes footprint_peak() const { return footprint_peak_; }
  std::optional<trace::CgroupSample> largest_cgroup() const { return largest_cgroup_; }  // the highest usage sample
  const PssSampler* pss_sampler() const { return pss_.get(); }
  const UsageSeries& usage() const { return usage_; }  // memory by kind, tasks (KINDS, TASKS)

 private:
  Member* find(pid_t pid);
  void sync_pss_members();  // hands the PSS thread the tree's members when they changed
  void name_member(Member& m);
  void sample_charge(Seconds t);  // the CGROUP line of a sample (parts at a new high of the charge)
  void cgroup_with_parts(Seconds t, Bytes usage, Bytes peak);  // a CGROUP line with memory.stat's parts
  void footprint_reading(Bytes bytes);

  ProcTree& tree_;
  trace::Writer& out_;
  const WallAnchor& clock_;
  SamplerConfig config_;
  TreeCgroup* cgroup_;  // its peak counter is reset at checkpoints
  TreeAccounting accounting_;
  std::unique_ptr<PssSampler> pss_;
  std::uint64_t pss_generation_ = ~std::uint64_t{0};
  std::uint64_t count_ = 0;
  trace::MemSample peak_;
  trace::MemSample last_;
  std::optional<trace::PssSample> latest_pss_, peak_pss_;
  Bytes peak_uss_ = 0;
  std::optional<trace::CgroupSample> largest_cgroup_;
  std::optional<Bytes> peak_pss_unreclaimable_, peak_cgroup_unreclaimable_;
  Bytes rise_floor_ = 0;        // the Σ RSS that asks the PSS thread for its next early pass
  Bytes parts_rise_floor_ = 0;  // the charge at which a sample reads memory.stat's parts too
  std::optional<Bytes> footprint_now_;
  Bytes footprint_peak_ = 0;
  UsageSeries usage_;
  trace::IoSample unseen_io_;  // the final counters of a process reaped before it became a member
};

}  // namespace qprof::record
