// A cgroup of the tree's own (--cgroup): exact membership, and the tree's exact memory peak
// (page cache and kernel memory included). Needs the right to create cgroups, usually root.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "qprof/common/proc_file.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof {

class TreeCgroup {
 public:
  // Creates a fresh cgroup: cgroup v1 "memory" if mounted, else cgroup v2. On failure returns
  // null and says why in `why_not`. `mountinfo` is where the mounts are read from.
  static std::unique_ptr<TreeCgroup> create(std::string& why_not, const std::string& mountinfo = "/proc/self/mountinfo");
  ~TreeCgroup();  // moves stragglers to the parent cgroup, then removes the directory
  TreeCgroup(const TreeCgroup&) = delete;
  TreeCgroup& operator=(const TreeCgroup&) = delete;

  const std::string& path() const { return dir_; }
  std::string procs_path() const { return dir_ + "/cgroup.procs"; }
  bool is_v1() const { return v1_; }
  // False on a v2 hierarchy whose memory controller cannot be enabled: membership only.
  bool has_memory() const { return usage_.is_open(); }
  std::optional<Bytes> usage() const;
  std::optional<Bytes> peak() const;  // v1 memory.max_usage_in_bytes, v2 memory.peak

 private:
  TreeCgroup(std::string dir, std::string parent, bool v1);
  std::optional<Bytes> read_number(const ProcFile& f) const;

  std::string dir_;
  std::string parent_;
  bool v1_;
  ProcFile usage_;
  ProcFile peak_;
};

}  // namespace qprof
