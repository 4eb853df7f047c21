// SPDX-License-Identifier: Apache-2.0
// A cgroup of the tree's own (--cgroup): exact membership, and the peak of the memory charged to
// it (page cache and kernel memory included; pages first touched elsewhere are not). Needs the right to create cgroups,
// usually root.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qprof/common/failure.hpp"
#include "qprof/common/proc_file.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof::record {

class TreeCgroup {
 public:
  // Creates a fresh cgroup below qprof's own (so that the limits above it still apply): cgroup v1
  // "memory" if mounted, else cgroup v2. Groups of qprofs that died (qprof-PID of a PID that is
  // gone) are removed first. The Failure says why none could be made. `mountinfo` and
  // `proc_cgroup` are where the mounts and qprof's own cgroups are read from.
  static Result<std::unique_ptr<TreeCgroup>> create(const std::string& mountinfo = "/proc/self/mountinfo",
                                                    const std::string& proc_cgroup = "/proc/self/cgroup");
  ~TreeCgroup();  // moves stragglers to the parent cgroup, then removes the directory
  TreeCgroup(const TreeCgroup&) = delete;
  TreeCgroup& operator=(const TreeCgroup&) = delete;

  const std::string& path() const { return dir_; }
  std::string procs_path() const { return dir_ + "/cgroup.procs"; }
  bool is_v1() const { return v1_; }
  // False on a v2 hierarchy whose memory controller cannot be enabled: membership only.
  bool has_memory() const { return usage_.is_open(); }
  std::optional<Bytes> usage() const;
  // The kernel's high-water mark of the charge since the group was made: v1
  // memory.max_usage_in_bytes, v2 memory.peak, and the windows closed so far.
  std::optional<Bytes> peak() const;
  // Closes a window of the kernel's peak counter: its peak since the previous window closed (or
  // since the group was made), then resets the counter to the current charge, so that the next
  // window is exact too. A stage from one checkpoint to another is then exact at any nesting. v1
  // resets by writing max_usage_in_bytes; v2 by writing memory.peak through the descriptor read
  // (Linux 6.12+, each descriptor its own). nullopt where the kernel cannot reset (the peaks
  // between checkpoints are sampled then).
  std::optional<Bytes> close_window();
  // The charge's parts from memory.stat (cgroup_stat.cpp): anonymous memory (v2 anon, v1 rss),
  // page cache (v2 file, v1 cache) and, of it, shared memory (shmem in both), which only swap
  // could free; absent where the kernel does not give them.
  struct Parts {
    std::optional<Bytes> anon;
    std::optional<Bytes> file;
    std::optional<Bytes> shmem;
  };
  Parts parts() const;
  // How many processes the OOM killer killed in the cgroup: oom_kill of v2 memory.events or v1
  // memory.oom_control (kernels before 4.13 do not say).
  std::optional<std::uint64_t> oom_kills() const;

 private:
  TreeCgroup(std::string dir, std::string parent, bool v1);
  std::optional<Bytes> read_number(const ProcFile& f) const;

  std::string dir_;
  std::string parent_;
  bool v1_;
  ProcFile usage_;
  ProcFile peak_;          // read-write where the kernel lets the counter be reset
  bool resettable_;        // false once a reset failed
  Bytes closed_peak_ = 0;  // the highest window closed so far
};

// The parts of a memory.stat's text (TreeCgroup::Parts): the group's own figures, as v1 rss and
// cache are (not total_rss, total_cache), since the tree's processes are in the group itself.
TreeCgroup::Parts memory_stat_parts(std::string_view text, bool v1);
// The value of `key` in a "key value" per line file (memory.stat, memory.events): a key is a
// whole word ("rss" is not "rss_huge").
std::optional<std::uint64_t> keyed_value(std::string_view text, std::string_view key);

// The PIDs of a cgroup.procs file's text, whole lines only: the file is read up to a bound, and
// a line cut there would name another process (the kernel ends every line with '\n').
std::vector<pid_t> cgroup_procs_pids(std::string_view text);

// cgroup v2 lets a group enable a controller for its children only while it holds no process
// itself. Where qprof is the only process of `group` (a scope made for it: qprof fit runs itself
// again inside `systemd-run --user --scope -p Delegate=yes`), it moves itself into the leaf
// `group`/qprof-self and enables the memory controller below `group`. False, and nothing moved,
// where another process shares the group or the kernel refuses.
inline constexpr const char* kSelfLeaf = "qprof-self";
bool move_self_to_leaf(const std::string& group);

// oom_kill of the memory cgroup at `dir` (v1 memory.oom_control, v2 memory.events); nullopt
// where the kernel does not say or the file cannot be read.
std::optional<std::uint64_t> oom_kills_in(const std::string& dir, bool v1);

// A line of /proc/PID/cgroup: "hierarchy-ID:controller-list:cgroup-path" (v1: "4:memory:/a/b";
// v2: "0::/a/b"); the path may hold colons of its own. nullopt for a line of another form.
struct ProcCgroupLine {
  std::string_view id;
  std::string_view controllers;
  std::string_view path;
};
std::optional<ProcCgroupLine> split_proc_cgroup_line(std::string_view line);

// The memory cgroup qprof itself runs in, where the job runs too without --cgroup: the growth of
// its oom_kill over a run says the OOM killer killed in that group meanwhile (v1: a victim of
// that group; v2: of that group or one below it). Found once, at the start (the mount table is
// the slow part), so that the end reads one file. nullopt where no hierarchy gives a count.
struct MemoryCgroupDir {
  std::string dir;
  bool v1 = false;
  std::uint64_t oom_kills = 0;  // its oom_kill when it was found
};
std::optional<MemoryCgroupDir> own_memory_cgroup(const std::string& mountinfo = "/proc/self/mountinfo",
                                                 const std::string& proc_cgroup = "/proc/self/cgroup");

}  // namespace qprof::record
