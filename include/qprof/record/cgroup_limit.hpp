// SPDX-License-Identifier: Apache-2.0
// Writing a memory cgroup's limit: `qprof run --mem` on the tree's own group, and each probe of
// `qprof fit` (fit/probe_group.hpp).
#pragma once

#include <string>
#include <string_view>

#include "qprof/common/types.hpp"

namespace qprof::record {

// One write(2) of `text` to a cgroup file that must exist: cgroup files take a value per write,
// and a file the kernel does not have must not be created as a plain file. `why`: the file and
// the kernel's reason when it was not done.
enum class CgroupWrite { done, missing, refused };
CgroupWrite write_cgroup_file(const std::string& path, std::string_view text, std::string* why = nullptr);

// What writing a limit did. `swap_limited` is false where the kernel has no swap control for
// the group (v1 without memory.memsw.*: swap accounting is off; v2 without memory.swap.max).
struct LimitWrite {
  bool ok = false;
  bool swap_limited = false;
  std::string error;  // when !ok: the file and the kernel's reason
};

// On the group's directory `dir` (tests point it at a fabricated tree). v1:
// memory.limit_in_bytes, then memory.memsw.limit_in_bytes (the kernel refuses a memsw limit
// below the memory limit, so the memory limit goes first); v2: memory.max and memory.swap.max 0.
// A missing swap file is not created.
LimitWrite write_memory_limit(const std::string& dir, bool v1, Bytes limit);

}  // namespace qprof::record
