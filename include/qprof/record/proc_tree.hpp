// Who is in the profiled tree right now: the command and every descendant, double-forked daemons
// included (qprof is their subreaper, so they reparent to it rather than to init).
//
// Membership comes from an incremental /proc scan — the parent link is read once, for PIDs not
// seen before, and a process is keyed by PID + start time — or, with --cgroup, from the tree's
// own cgroup. The scan is skipped while /proc/loadavg shows that no PID was allocated.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "qprof/common/proc_file.hpp"
#include "qprof/common/proc_parse.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof {

struct Member {
  pid_t pid = 0;
  std::uint64_t start_ticks = 0;
  bool is_root = false;
  bool gone = false;  // set by a probe whose read failed: dropped by ProcTree::prune()
  ProcFile statm;     // also the liveness handle: it fails once the process is reaped
  ProcFile stat;      // CPU time
  ProcFile io;        // I/O counters
  ProcFile status;    // VmHWM
  Bytes rss = 0;      // latest readings
  double cpu_seconds = 0;  // own and waited-for children's user + system time
  IoSample io_total;       // its counters (t unused)
  Bytes hwm = 0;
  bool reaped_by_qprof = false;  // its final figures were taken at the reap
};

class ProcTree {
 public:
  // `self` is qprof: orphans of the tree reparent to it.
  ProcTree(std::string proc_root, pid_t self);

  // Before the command starts: every process that exists now is an outsider, known without
  // reading its parent link, so the first scan after the launch reads only new processes.
  void prime();
  // The command: the root of the tree.
  void add_root(pid_t root);
  ~ProcTree();
  ProcTree(const ProcTree&) = delete;
  ProcTree& operator=(const ProcTree&) = delete;

  // Membership from a cgroup's cgroup.procs instead of the /proc scan.
  void use_cgroup(std::string cgroup_procs_path);

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
  bool empty() const { return members_.empty(); }
  // Full /proc listings taken (the others were skipped because no PID was allocated).
  std::uint64_t scans() const { return scans_; }

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
  std::size_t refresh_from_scan();
  std::size_t refresh_from_cgroup();
  void classify(std::vector<Fresh>& fresh);
  bool add_member(pid_t pid, std::uint64_t start_ticks, bool is_root);
  // /proc/PID/stat through the kept /proc descriptor, into a stack buffer: no allocation.
  std::optional<proc::Stat> read_stat(pid_t pid) const;
  std::string pid_path(pid_t pid, const char* file) const;

  std::string proc_root_;
  pid_t self_;
  std::vector<Member> members_;

  ProcFile loadavg_;
  std::int64_t last_pid_seen_ = -1;
  int proc_dir_fd_ = -1;
  std::vector<char> dents_;
  std::vector<pid_t> listing_;
  std::vector<Known> known_, next_known_;
  std::vector<Fresh> fresh_;
  std::uint64_t scans_ = 0;
  std::uint64_t generation_ = 0;

  std::string cgroup_procs_;  // empty: the /proc scan
  std::vector<char> cgroup_buf_;
};

}  // namespace qprof
