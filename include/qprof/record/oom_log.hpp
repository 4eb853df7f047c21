// SPDX-License-Identifier: Apache-2.0
// The kernel's word on an OOM kill: the "oom-kill:" and "Killed process" lines of the kernel log
// (/dev/kmsg, readable by root or where kernel.dmesg_restrict is 0), which name the victim, the
// memory cgroup whose limit was hit and what the victim held.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "qprof/trace/trace.hpp"

namespace qprof::record {

// One kernel log record about an OOM kill, parsed.
struct KernelOomLine {
  std::int64_t usec = 0;  // the record's time: microseconds since boot (the monotonic clock)
  std::int64_t pid = 0;
  std::string name;
  // "oom-kill:" lines: the constraint (CONSTRAINT_MEMCG: a cgroup's limit; CONSTRAINT_NONE: the
  // machine) and the cgroup whose limit was hit.
  bool is_constraint = false;
  std::string constraint;
  std::string oom_memcg;
  // "Killed process" lines: what the victim held, anon + file + shmem RSS.
  std::optional<Bytes> rss;
};

// A /dev/kmsg record, "PRIORITY,SEQUENCE,USEC,FLAGS;MESSAGE" (continuation lines after '\n'
// ignored); nullopt for any record that is not one of the two lines above.
std::optional<KernelOomLine> parse_kmsg_oom(std::string_view record);

// Reads the kernel log from the moment it is opened on, never blocking.
class KernelLog {
 public:
  // False where the log may not be read (dmesg_restrict, no /dev/kmsg); `why_not` says why.
  bool open(std::string& why_not, const std::string& path = "/dev/kmsg");
  ~KernelLog();
  bool is_open() const { return fd_ >= 0; }
  // The OOM records written since the last call, handed to `on_line` in order.
  template <typename F>
  void drain(F&& on_line) {
    std::string_view record;
    while (next(record)) {
      if (auto line = parse_kmsg_oom(record)) on_line(*line);
    }
  }

 private:
  bool next(std::string_view& record);
  int fd_ = -1;
  char buf_[8192];
};

}  // namespace qprof::record
