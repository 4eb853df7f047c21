// SPDX-License-Identifier: Apache-2.0
// The memory limit in force for the job: what it may use before the kernel (a cgroup's OOM
// killer, an allocation that fails under RLIMIT_AS) or the batch system stops it.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "qprof/common/types.hpp"

namespace qprof::record {

struct MemoryLimit {
  Bytes bytes = 0;
  std::string source;  // cgroup, cgroup-v1, slurm, rlimit-as, memtotal (the header's limit_source)
  std::string detail;  // where it was read: "memory.max of /sys/fs/cgroup/job", "SLURM_MEM_PER_NODE=4096"
};

// Where to look; the defaults are the machine's, tests point them at fake trees.
struct LimitProbe {
  std::string proc_root = "/proc";             // <proc_root>/self/cgroup, <proc_root>/meminfo
  std::string cgroup_root = "/sys/fs/cgroup";  // v2 unified, or v1 with a memory/ hierarchy below
  std::function<const char*(const char*)> getenv = [](const char* name) { return std::getenv(name); };
  // RLIMIT_AS's soft limit; nullopt: read it with getrlimit. RLIM_INFINITY: none.
  std::optional<unsigned long long> rlimit_as;
};

// The tightest of: the enclosing cgroup's memory.max and memory.high (v2, every level up to the
// root), v1 memory.limit_in_bytes (every level) and memory.stat's hierarchical_memory_limit,
// Slurm's SLURM_MEM_PER_NODE, or SLURM_MEM_PER_CPU × SLURM_CPUS_ON_NODE (else
// SLURM_CPUS_PER_TASK), RLIMIT_AS, and the machine's MemTotal. nullopt only when none can be read.
std::optional<MemoryLimit> find_memory_limit(const LimitProbe& probe = {});

}  // namespace qprof::record
