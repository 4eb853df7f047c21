// Parsers for the text of /proc files: pure functions over what a read returned, tested over
// recorded files (tests/data/proc). None of them allocates.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace qprof::proc {

// /proc/PID/statm: the second field, resident pages (a zombie reads all zeros).
std::optional<std::uint64_t> parse_statm_resident_pages(std::string_view text);

struct Stat {
  char state = '?';
  std::int64_t ppid = 0;
  std::uint64_t utime_ticks = 0;
  std::uint64_t stime_ticks = 0;
  std::uint64_t start_ticks = 0;  // since boot: with the PID, identifies a process for its lifetime
};
// /proc/PID/stat. The command name in parentheses may itself contain spaces and parentheses.
std::optional<Stat> parse_stat(std::string_view text);

// /proc/loadavg: the PID most recently allocated in this PID namespace (its last field). While it
// does not change, no process (or thread) was created, so the tree cannot have grown.
std::optional<std::int64_t> parse_loadavg_last_pid(std::string_view text);

}  // namespace qprof::proc
