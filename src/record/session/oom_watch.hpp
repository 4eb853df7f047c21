// SPDX-License-Identifier: Apache-2.0
// OOM kills of the tree's processes, said with the process, the time, the stage, the limit and
// what it and the tree held. Three witnesses, best first: the kernel log (it names the victim and
// the cgroup whose limit was hit), the oom_kill count of the tree's memory cgroup (the tree's
// own with --cgroup, else qprof's, which the job shares), and a member that qprof reaped dead of
// a SIGKILL it did not send. A worker whose parent ignores its death is still seen: the log and
// the count do not depend on who reaps it.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "notices.hpp"
#include "qprof/common/clock.hpp"
#include "qprof/record/cgroup.hpp"
#include "qprof/record/oom_log.hpp"
#include "qprof/record/proc_tree.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::record::session {

class OomWatch {
 public:
  // Before the command starts. `tree_cgroup`: --cgroup's group (nullptr: none); `own`: qprof's
  // memory cgroup, the job's too without --cgroup.
  void open(const TreeCgroup* tree_cgroup, const std::optional<MemoryCgroupDir>& own, Notices& notices);

  // What the run knows at a poll: the members as of the last sample, and that sample's figure.
  struct Now {
    const ProcTree& tree;
    pid_t command = -1;
    const WallAnchor& clock;
    std::int64_t mono_ns = 0;
    std::optional<Bytes> tree_figure;  // the footprint, else Σ RSS, of the last sample
    // The innermost stage open at a time: a kill's, which may come before markers taken since.
    std::function<std::string(Seconds)> stage_at;
    std::optional<Bytes> limit;  // the limit in force (the header's), for a kill whose cgroup is unknown
  };
  // Before each regular sample, and once at the end (`last`): kills since the last poll become
  // OOM lines. The last poll also holds the log's kills against the counts, so that a kill whose
  // log line the log did not give (it came late, or a container's log shows none) is still said.
  void poll(const Now& now, trace::Writer& out, Notices& notices, bool last = false);
  // A member qprof reaped that a SIGKILL qprof did not send ended: `maxrss` is its peak.
  void killed_member(pid_t pid, Bytes maxrss);
  const std::vector<trace::OomKill>& kills() const { return kills_; }

 private:
  struct Counter {
    std::string dir;
    bool v1 = false;
    bool tree_only = false;  // the tree's own group: every kill counted there is the tree's
    std::uint64_t last = 0;
  };
  struct Reaped {
    pid_t pid;
    Bytes maxrss;
    bool said = false;  // tied to a kill counted
  };
  void from_kernel_log(const Now& now, trace::Writer& out, Notices& notices);
  // Kills counted that the kernel log did not name: a reaped SIGKILL, else a member now dead.
  void from_counters(const Now& now, trace::Writer& out, Notices& notices, bool last);
  // Kills newly counted, less those the log named: unnamed_ grows by them.
  void count_kills(const Now& now);
  // The victim of a kill counted: the largest member now dead, or gone since the kills began.
  bool take_victim(const Now& now, trace::OomKill& kill);
  bool in_tree(const Now& now, pid_t pid) const;
  bool said(pid_t pid) const;
  void add(trace::OomKill kill, const Now& now, trace::Writer& out, Notices& notices);

  KernelLog log_;
  std::vector<Counter> counters_;
  std::vector<Reaped> reaped_;
  std::vector<KernelOomLine> constraints_;  // "oom-kill:" lines waiting for their "Killed process"
  std::uint64_t unnamed_ = 0;               // kills counted, not yet tied to a process
  int unnamed_polls_ = 0;                   // polls they waited for their victim to die
  std::uint64_t named_by_log_ = 0;          // the tree's kills the log named, not yet met in a count
  std::uint64_t departed_mark_ = 0;         // the tree's departures before the kills unnamed_ counts
  std::int64_t last_poll_ns_ = 0;           // the previous poll (monotonic)
  std::int64_t counted_after_ns_ = 0;       // the poll before the kills unnamed_ counts were counted
  bool unnamed_tree_only_ = false;          // some were counted in the tree's own group
  std::string unnamed_scope_;               // the group they were counted in
  std::vector<trace::OomKill> kills_;
};

// The limit of the memory cgroup at `path` (as the kernel log names it, "/slurm/uid_0/job_5"):
// v1 memory.limit_in_bytes or v2 memory.max under `cgroup_root`; nullopt where none is set.
std::optional<Bytes> memcg_limit(const std::string& path, const std::string& cgroup_root = "/sys/fs/cgroup");

}  // namespace qprof::record::session
