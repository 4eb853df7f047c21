// SPDX-License-Identifier: Apache-2.0
// Who is in the profiled tree right now: the command and every descendant, double-forked daemons
// included (qprof is their subreaper, so they reparent to it rather than to init).
//
// Membership comes from the kernel's process events (ProcEvents: which process forked which, as
// it happens; where qprof may subscribe), else from an incremental /proc scan — the parent link
// is read once, for PIDs not seen before, and a process is keyed by PID + start time — or, with
// --cgroup, from the tree's own cgroup. The scan is skipped while /proc/loadavg shows that no PID
// was allocated; with events it runs only if the kernel dropped some.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "qprof/common/proc_file.hpp"
#include "qprof/common/proc_parse.hpp"
#include "qprof/record/proc_events.hpp"
#include "qprof/common/proc_status.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof::record {

struct Member {
  pid_t pid = 0;
  pid_t ppid = 0;  // its parent when it joined: who reaps it unless it is orphaned
  std::uint64_t start_ticks = 0;
  bool is_root = false;
  bool gone = false;         // set by a probe whose read failed: dropped by ProcTree::prune()
  ProcFile statm;            // also the liveness handle: it fails once the process is reaped
  ProcFile stat;             // CPU time
  ProcFile io;               // I/O counters
  ProcFile status;           // VmHWM
  ProcFile schedstat;        // whether it ran since the last stats pass (when single-threaded)
  Bytes rss = 0;             // latest readings
  double cpu_seconds = 0;    // own and waited-for children's user + system time
  trace::IoSample io_total;  // its counters (t unused)
  Bytes hwm = 0;
  // The page faults counted when VmHWM was last read, and stats passes since: status, the
  // dearest file of the stats path, is read again only if the process faulted (its high-water
  // mark can only have risen through faults) or, to bound what a fault counted elsewhere (a
  // debugger's write, khugepaged) could hide, every kHwmRefreshPasses passes.
  std::uint64_t faults_at_hwm = ~std::uint64_t{0};
  std::uint32_t passes_since_hwm = 0;
  // The page faults its latest stat showed; read from the zombie just before qprof reaps it,
  // they say whether it grew after its last VmHWM reading (TreeAccounting::after_reap).
  std::uint64_t faults = ~std::uint64_t{0};
  std::uint64_t hwm_window = ~std::uint64_t{0};  // the stats window (HwmBound) of its last good reading
  // A single-threaded process whose schedstat shows it was not scheduled since the last full
  // reading has the same CPU time, I/O and VmHWM: the stats path reads nothing else of it
  // (but for a full reading every kIdleRefreshPasses passes).
  std::uint64_t threads = 0;
  std::uint64_t sched_run_ns = 0, sched_runs = 0;
  std::uint32_t idle_passes = 0;
  proc::StatusUsage usage;       // RSS by kind, swap, VmSize, threads (status, on the stats schedule)
  bool reaped_by_qprof = false;  // its final figures were taken at the reap
  bool named = false;            // its PROC line (name) was written (with -M)
  // A member that joins between its fork and its exec is first named after its parent ("sh"):
  // the name is read again a few samples later (sampler.cpp), and a changed one written anew.
  char comm[16] = {};  // the name written (the kernel's comm: at most 15 bytes)
  std::uint8_t name_rechecks = 0;
  std::uint32_t samples_since_named = 0;
};

class ProcTree {
 public:
  // `self` is qprof: orphans of the tree reparent to it.
  ProcTree(std::string proc_root, pid_t self);

  // Before the command starts: subscribes to the process events (unless `use_events` is false,
  // the proc root is not /proc, or QPROF_PROC_EVENTS=0), and takes every process that exists
  // now as an outsider, known without reading its parent link, so that a scan after the launch
  // reads only new processes.
  void prime(bool use_events = true);
  // The command: the root of the tree.
  void add_root(pid_t root);
  ~ProcTree();
  ProcTree(const ProcTree&) = delete;
  ProcTree& operator=(const ProcTree&) = delete;

  // Membership from a cgroup's cgroup.procs instead of the /proc scan.
  void use_cgroup(std::string cgroup_procs_path);
  // cgroup.procs is read through a window of this many bytes, whole lines at a time, up to the
  // limit (pid_max's 4 194 304 PIDs of 7 digits take 32 MiB), and read again only when a member
  // may have forked since (the process events; without them, any new PID), or this long after
  // the last read.
  static constexpr std::size_t kCgroupReadWindow = 1 << 14;
  static constexpr std::size_t kCgroupReadLimit = std::size_t{64} << 20;
  static constexpr std::int64_t kCgroupRecheckNs = 1'000'000'000;

  // Adds processes that joined the tree since the last call. Returns how many joined.
  std::size_t refresh();
  // Drops members marked gone, first handing each to `on_gone` when given.
  void prune();
  template <typename F>
  void prune(F&& on_gone) {
    for (const Member& m : members_) {
      if (m.gone) on_gone(m);
    }
    prune();
  }
  // Changes whenever a member joins or leaves.
  std::uint64_t generation() const { return generation_; }

  std::vector<Member>& members() { return members_; }
  const std::vector<Member>& members() const { return members_; }
  // The members' PIDs, in a buffer the tree keeps (no allocation once it is large enough): what
  // the GPU sampler, which knows nothing of Member, is given.
  std::span<const pid_t> pids();
  bool empty() const { return members_.empty(); }
  // Processes of the tree some of whose /proc files could not be opened because qprof ran out
  // of descriptors (EMFILE, ENFILE): the figures miss them, in whole (no statm) or in part.
  std::size_t unread() const { return unread_.size(); }
  // Full /proc listings taken (the others were skipped because no PID was allocated).
  std::uint64_t scans() const { return scans_; }
  // Whether membership comes from the kernel's process events.
  bool uses_events() const { return events_.is_open(); }

  // A process of the tree that is gone, as last read: what an OOM kill counted after the victim
  // was pruned still names (a process that died before it joined has no reading).
  struct Departed {
    pid_t pid = 0;
    Bytes peak = 0;  // the most it was seen to hold (its RSS reads 0 once it is a zombie)
    char comm[16] = {};
    std::uint64_t seq = 0;         // departed_seq() when it left: 1 for the first
    bool reaped_by_qprof = false;  // its wait status is known (its peak then counts its children)
  };
  // The latest kDeparted, oldest first reading; the one of `pid`, or nullptr.
  const Departed* departed_member(pid_t pid) const;
  // Departures so far: those with a seq above an earlier value left since.
  std::uint64_t departed_seq() const { return departed_seq_; }
  template <typename F>
  void for_each_departed_since(std::uint64_t seq, F&& f) const {
    for (const Departed& d : departed_) {
      if (d.seq > seq) f(d);
    }
  }

 private:
  struct Known {
    pid_t pid;
    bool member;
  };
  struct Fresh {
    pid_t pid;
    pid_t ppid;
    std::uint64_t start_ticks;
    int verdict;  // -1 undecided, 0 outside, 1 member
  };

  bool list_pids();
  // /proc/loadavg's newest PID: it moves whenever a process (or thread) is created.
  std::optional<std::int64_t> newest_pid();
  std::size_t refresh_from_scan();
  std::size_t refresh_from_cgroup();
  // Whether a member may have forked since the last call: a member's fork among the process
  // events (or events lost), else any new PID in /proc/loadavg.
  bool member_forked();
  // The process events may be used: the real /proc, and not turned off (QPROF_PROC_EVENTS=0).
  bool events_allowed() const;
  std::size_t refresh_from_events();
  bool is_member(pid_t pid) const;
  // Processes of the tree that are gone, the latest kDeparted: a fork event of one of them,
  // drained after it died, still makes its (orphaned, adopted) child the tree's.
  void note_departed(pid_t pid, const Member* m = nullptr);
  bool departed(pid_t pid) const { return departed_member(pid) != nullptr; }
  void classify(std::vector<Fresh>& fresh);
  bool add_member(pid_t pid, pid_t ppid, std::uint64_t start_ticks, bool is_root);
  void note_unread(pid_t pid);
  // /proc/PID/stat through the kept /proc descriptor, into a stack buffer: no allocation.
  std::optional<proc::Stat> read_stat(pid_t pid) const;
  std::string pid_path(pid_t pid, const char* file) const;

  std::string proc_root_;
  pid_t self_;
  std::vector<Member> members_;
  std::vector<pid_t> pids_;

  ProcFile loadavg_;
  std::int64_t last_pid_seen_ = -1;
  int proc_dir_fd_ = -1;
  mutable int reserve_fd_ = -1;  // freed for a moment when every other descriptor is taken
  std::vector<pid_t> unread_;    // sorted
  std::vector<char> dents_;
  std::vector<pid_t> listing_;
  std::vector<Known> known_, next_known_;
  std::vector<Fresh> fresh_;
  std::uint64_t scans_ = 0;
  std::uint64_t generation_ = 0;

  ProcEvents events_;
  static constexpr std::size_t kDeparted = 256;
  std::array<Departed, kDeparted> departed_{};
  std::uint64_t departed_seq_ = 0;
  std::string cgroup_procs_;           // empty: the events or the /proc scan
  std::vector<char> cgroup_buf_;       // a fixed window on cgroup.procs
  std::vector<pid_t> member_pids_;     // the members' PIDs, sorted, while cgroup.procs is read
  std::int64_t cgroup_last_pid_ = -1;  // /proc/loadavg's newest PID when cgroup.procs was last read
  std::int64_t cgroup_read_ns_ = 0;    // monotonic time of that read
};

}  // namespace qprof::record
