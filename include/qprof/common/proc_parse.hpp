// SPDX-License-Identifier: Apache-2.0
// Parsers for the text of /proc files: pure functions over what a read returned, tested over
// recorded files (tests/data/proc). None of them allocates.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string_view>

#include "qprof/common/text.hpp"

namespace qprof::proc {

// A PID as /proc and cgroup files write it: decimal digits, no sign, no leading zero, nothing
// after. False for anything else (a directory such as "self", a cut line).
bool parse_pid(std::string_view text, pid_t& pid);

// Calls each(pid) for every line of `lines` that is a PID (cgroup.procs, tasks): whole lines,
// the caller having left out a line its read cut.
template <class F>
void each_pid_line(std::string_view lines, F&& each) {
  while (!lines.empty()) {
    pid_t pid = 0;
    if (parse_pid(take_until(lines, '\n'), pid)) each(pid);
  }
}

// /proc/PID/statm: the second field, resident pages (a zombie reads all zeros).
std::optional<std::uint64_t> parse_statm_resident_pages(std::string_view text);

struct Stat {
  char state = '?';
  std::int64_t ppid = 0;
  std::uint64_t minflt = 0;  // page faults of the whole process, minor and major: its RSS
  std::uint64_t majflt = 0;  // cannot have grown by its own doing while they stand still
  std::uint64_t utime_ticks = 0;
  std::uint64_t stime_ticks = 0;
  std::uint64_t cutime_ticks = 0;  // children it waited for: their time moves here at the reap
  std::uint64_t cstime_ticks = 0;
  std::uint64_t start_ticks = 0;  // since boot: with the PID, identifies a process for its lifetime
  std::uint64_t num_threads = 0;
};
// /proc/PID/stat. The command name in parentheses may itself contain spaces and parentheses.
std::optional<Stat> parse_stat(std::string_view text);

// /proc/PID/schedstat (the main thread's): time on a CPU, time waiting for one, and how many
// times it was scheduled. While the last two stand still, the thread has not run.
struct Schedstat {
  std::uint64_t run_ns = 0;
  std::uint64_t wait_ns = 0;
  std::uint64_t runs = 0;
};
std::optional<Schedstat> parse_schedstat(std::string_view text);

// /proc/PID/io. A reaped child's counters are added to its parent's; a zombie's still read.
struct Io {
  std::uint64_t rchar = 0;
  std::uint64_t wchar = 0;
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
  std::uint64_t cancelled_write_bytes = 0;
};
std::optional<Io> parse_io(std::string_view text);

// VmHWM of /proc/PID/status in bytes: the process's own RSS high-water mark. A zombie or a
// kernel thread has none.
std::optional<std::uint64_t> parse_status_vmhwm(std::string_view text);

// /proc/PID/smaps_rollup in bytes. USS is what only this process maps: Private_Clean +
// Private_Dirty (+ Private_Hugetlb).
struct Rollup {
  std::uint64_t rss = 0;
  std::uint64_t pss = 0;
  std::uint64_t uss = 0;
  // Pss_Anon + Pss_Shmem (Linux 5.9+); has_split is false on older kernels, which lack both.
  std::uint64_t pss_unreclaimable = 0;
  bool has_split = false;
  // Anonymous pages (Anonymous, less those KSM merged, which unrelated processes may share) and
  // its share of them (Pss_Anon, Linux 5.9+: 0 without has_split).
  std::uint64_t anon = 0;
  std::uint64_t pss_anon = 0;
  std::uint64_t pss_shmem = 0;  // its share of shared memory (Pss_Shmem, Linux 5.9+)
};
std::optional<Rollup> parse_smaps_rollup(std::string_view text);

// /proc/loadavg: the PID most recently allocated in this PID namespace (its last field). While it
// does not change, no process (or thread) was created, so the tree cannot have grown.
std::optional<std::int64_t> parse_loadavg_last_pid(std::string_view text);

}  // namespace qprof::proc
