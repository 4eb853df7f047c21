// SPDX-License-Identifier: Apache-2.0
// Watched directories (--watch-dir, DIR lines) over a run, the memory limit the header recorded,
// and a budget given as a share of it (dirs.cpp).
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qprof/common/failure.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof::analysis {

// The trace's watched directory that `name` names: its path as recorded or, when no path equals
// it, its last component (the first directory that matches).
const trace::WatchedDir* find_watched_dir(const trace::Trace& t, std::string_view name);
// What `dir:NAME` calls a directory of the trace: its last component, or its path when another
// directory of the trace has the same last component.
std::string dir_name(const trace::Trace& t, const trace::WatchedDir& d);

// A watched directory over the run. Growth is Quark's: the largest apparent size over the first
// (a directory that did not exist counts as empty), never below 0.
struct DirGrowth {
  trace::WatchedDir dir;
  std::string name;  // dir_name
  Bytes start = 0, peak = 0, last = 0, growth = 0;
  Seconds peak_t = 0;
  Bytes allocated_peak = 0;
  Bytes fs_free_min = 0;
  std::size_t samples = 0;
};
std::vector<DirGrowth> dir_growths(const trace::Trace& t);
// The most dir:NAME metrics a trace lists (available_metrics, compare's columns): each is a
// column and a pass over the samples, so a trace of 100 000 directories would be quadratic.
// Tables of directories say how many they leave out.
inline constexpr std::size_t kMaxDirMetrics = 64;  // directories with samples, in index order
// Quark's peak_cache_dir_disk_usage_mb in bytes: the largest growth of any watched directory.
std::optional<Bytes> peak_dir_growth(const trace::Trace& t);

// The memory limit in force the header recorded (`limit`, `limit_source`).
struct LimitInfo {
  Bytes bytes = 0;
  std::string source;  // cgroup, cgroup-v1, slurm, rlimit-as, memtotal
};
std::optional<LimitInfo> memory_limit(const trace::Trace& t);
// A budget "90%" of the trace's limit, or a size; a failure when it cannot be had.
Result<Bytes> budget_bytes(std::string_view text, const trace::Trace& t);
// "90%" → 0.9; nullopt for anything else.
std::optional<double> parse_percent(std::string_view text);

}  // namespace qprof::analysis
