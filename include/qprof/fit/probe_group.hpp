// SPDX-License-Identifier: Apache-2.0
// The memory cgroup one probe of qprof fit runs in: a fresh group below qprof's own (record's
// TreeCgroup), with a limit and no swap, emptied of its processes and of its page cache before
// it goes, so that the next probe starts from the same cache state.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "qprof/common/types.hpp"
#include "qprof/record/cgroup.hpp"
#include "qprof/record/cgroup_limit.hpp"

namespace qprof::fit {

// The limit's writes, shared with `qprof run --mem` (record/cgroup_limit.hpp).
using record::LimitWrite;
using record::write_memory_limit;

// Drops the group's page cache: v1 memory.force_empty, v2 memory.reclaim of `charge` bytes.
// False when the kernel refused or the file is missing.
bool evict_page_cache(const std::string& dir, bool v1, Bytes charge);
// SIGKILLs every process of the group until none is left (v2 cgroup.kill where the kernel has
// it, then cgroup.procs in rounds: a process may fork while the round runs). True when the group
// is empty.
bool kill_members(const std::string& dir);

// A number of memory.stat ("key value" lines).
std::optional<std::uint64_t> stat_value(std::string_view memory_stat, std::string_view key);
// What reclaim cannot take back without swap: anonymous + shared memory (v1 rss + shmem, v2
// anon + shmem). nullopt where memory.stat lacks the anonymous figure.
std::optional<Bytes> unreclaimable_bytes(std::string_view memory_stat, bool v1);

class ProbeGroup {
 public:
  // The Failure has the kernel's reason where qprof may not create a memory cgroup.
  static Result<std::unique_ptr<ProbeGroup>> create();
  ~ProbeGroup();  // kills what is left, evicts the cache (unless evict() did), removes the group
  ProbeGroup(const ProbeGroup&) = delete;
  ProbeGroup& operator=(const ProbeGroup&) = delete;

  const std::string& path() const { return group_->path(); }
  std::string procs_path() const { return group_->procs_path(); }
  bool is_v1() const { return group_->is_v1(); }
  LimitWrite limit(Bytes bytes) { return write_memory_limit(path(), is_v1(), bytes); }
  bool kill_all() { return kill_members(path()); }
  // The peak charge: v1 memory.max_usage_in_bytes, v2 memory.peak; nullopt where the kernel has
  // no peak file (v2 before 5.19: the caller samples the charge).
  std::optional<Bytes> peak_charge() const { return group_->peak(); }
  std::optional<Bytes> charge() const { return group_->usage(); }
  std::optional<std::uint64_t> oom_kills() const { return group_->oom_kills(); }
  std::string memory_stat() const;
  // Kills what is left and evicts the page cache now; returns the CPU time the eviction took in
  // this thread. The kernel reclaims the cache in the writer's time, so that time is qprof's
  // though the pages are the probe's: fit reports it apart (FitReport::eviction_cpu_s).
  double evict();

 private:
  explicit ProbeGroup(std::unique_ptr<record::TreeCgroup> group) : group_(std::move(group)) {}
  std::unique_ptr<record::TreeCgroup> group_;
  bool evicted_ = false;
};

}  // namespace qprof::fit
