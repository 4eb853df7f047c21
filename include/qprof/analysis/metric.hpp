// SPDX-License-Identifier: Apache-2.0
// The memory figures a trace can hold, by name and meaning, and their series (metrics.cpp); what
// each one is lives in its row of the metric table (metric_table.hpp); the dir:NAME metrics of
// watched directories (dirs.cpp).
#pragma once

#include <compare>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qprof/trace/trace.hpp"

namespace qprof::analysis {

// The kinds of memory figure a trace can hold, each with one row in metric_table.cpp (dir last).
enum class MetricKind : std::uint8_t {
  footprint,       // shared pages once: CGROUP usage where the tree had its own group, else PSS
  unreclaimable,   // of the footprint, anonymous and shared memory (CGROUP anon + shmem, PSS's appended field)
  rss,             // MEM lines: the tree's RSS, sampled
  pss,             // PSS lines: the tree's proportional set size, sampled
  uss,             // PSS lines: the tree's unique set size, sampled
  gpu,             // GPU lines: the tree's GPU memory summed over devices, sampled
  cgroup,          // CGROUP lines (usage) and the kernel's high-water mark (CGROUP peak, PEAK cgroup)
  hwm_sum,         // HWM lines and PEAK hwm_sum: Σ VmHWM of the tree, an upper bound of its peak
  kernel_process,  // PEAK kernel_process: the largest single process (RUSAGE_CHILDREN), exact
  anon,            // KINDS lines: the tree's anonymous RSS (RssAnon)
  file,            // KINDS lines: the tree's file-backed RSS (RssFile)
  shmem,           // KINDS lines: the tree's shared-memory RSS (RssShmem)
  swap,            // KINDS lines: the tree's swapped-out pages (VmSwap)
  dir,             // DIR lines: a watched directory's apparent size (dir:NAME, see dir_metric)
};

// A memory figure: a built-in kind, or a watched directory (kind dir, index its slot in the
// process's registry of dir:NAME metrics, dirs.cpp). The index is 0 for every other kind.
// Built-in metrics are named as Metric::rss, …; dir metrics come from dir_metric or parse_metric.
struct Metric {
  MetricKind kind = MetricKind::footprint;
  std::uint32_t index = 0;

  friend constexpr bool operator==(const Metric&, const Metric&) = default;
  friend constexpr std::strong_ordering operator<=>(const Metric&, const Metric&) = default;

  static const Metric footprint;
  static const Metric unreclaimable;
  static const Metric rss;
  static const Metric pss;
  static const Metric uss;
  static const Metric gpu;
  static const Metric cgroup;
  static const Metric hwm_sum;
  static const Metric kernel_process;
  static const Metric anon;
  static const Metric file;
  static const Metric shmem;
  static const Metric swap;
};

inline constexpr Metric Metric::footprint{MetricKind::footprint};
inline constexpr Metric Metric::unreclaimable{MetricKind::unreclaimable};
inline constexpr Metric Metric::rss{MetricKind::rss};
inline constexpr Metric Metric::pss{MetricKind::pss};
inline constexpr Metric Metric::uss{MetricKind::uss};
inline constexpr Metric Metric::gpu{MetricKind::gpu};
inline constexpr Metric Metric::cgroup{MetricKind::cgroup};
inline constexpr Metric Metric::hwm_sum{MetricKind::hwm_sum};
inline constexpr Metric Metric::kernel_process{MetricKind::kernel_process};
inline constexpr Metric Metric::anon{MetricKind::anon};
inline constexpr Metric Metric::file{MetricKind::file};
inline constexpr Metric Metric::shmem{MetricKind::shmem};
inline constexpr Metric Metric::swap{MetricKind::swap};

struct MetricInfo {
  Metric metric;
  std::string_view name;   // on the command line and in machine output: "rss"
  std::string_view title;  // in tables: "RSS"
  std::string_view what;   // "RSS of the tree, sampled"
  // Instantaneous samples: a peak inside a time window means something. Cumulative figures
  // (hwm_sum) and end-of-run figures (kernel_process) have none.
  bool windowed;
};

const MetricInfo& metric_info(Metric m);
std::optional<Metric> parse_metric(std::string_view name);
// Every metric, in the order tables list them.
const std::vector<Metric>& all_metrics();
// "rss, pss, uss, gpu, cgroup, hwm_sum, kernel_process", or of the given ones.
std::string metric_names(const std::vector<Metric>& metrics = all_metrics());

bool has_metric(const trace::Trace& trace, Metric m);
std::vector<Metric> available_metrics(const trace::Trace& trace);

// The samples of a metric in time order (empty when the trace has none). gpu: one value per GPU
// sample time, the latest value of each device summed; cgroup: the usage; hwm_sum: Σ VmHWM so far.
std::vector<trace::MemSample> metric_series(const trace::Trace& trace, Metric m);

// `dir:NAME`: the apparent size of a watched directory (DIR lines), NAME being its path as
// recorded or, when no path equals it, its last component (the first directory that matches).
// Such metrics are made on demand (parse_metric("dir:NAME") registers NAME for the process):
// they are not in all_metrics(), but available_metrics() lists those of a trace.
// A dir metric is one of kind MetricKind::dir.
Metric dir_metric(std::string_view name);

}  // namespace qprof::analysis
