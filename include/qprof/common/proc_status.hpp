// SPDX-License-Identifier: Apache-2.0
// The figures of /proc/PID/status beyond VmHWM that say what a process holds: its RSS by kind,
// its swap, its virtual size and its thread count. The stats path already reads status for
// VmHWM, so these cost a parse, not a read.
#pragma once

#include <cstdint>
#include <string_view>

namespace qprof::proc {

struct StatusUsage {
  bool valid = false;         // the text was a status file with a Threads line
  std::uint64_t anon = 0;     // RssAnon, bytes
  std::uint64_t file = 0;     // RssFile
  std::uint64_t shmem = 0;    // RssShmem
  std::uint64_t swap = 0;     // VmSwap
  std::uint64_t vsz = 0;      // VmSize
  std::uint64_t threads = 0;  // Threads
};

// A zombie or a kernel thread has no Vm*/Rss* lines: its figures are 0, still valid.
// Kernels before 4.5 have no RssAnon/RssFile/RssShmem: those stay 0.
StatusUsage parse_status_usage(std::string_view text);

}  // namespace qprof::proc
