// SPDX-License-Identifier: Apache-2.0
// The memory figures a trace can hold, by name and meaning, and their series (metrics.cpp);
// the dir:NAME metrics of watched directories (dirs.cpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qprof/trace/trace.hpp"

namespace qprof {

// The memory figures a trace can hold.
enum class Metric {
  footprint,       // shared pages once: CGROUP usage where the tree had its own group, else PSS
  unreclaimable,   // of the footprint, anonymous and shared memory (CGROUP anon, PSS's appended field)
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
};

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

bool has_metric(const Trace& trace, Metric m);
std::vector<Metric> available_metrics(const Trace& trace);

// The samples of a metric in time order (empty when the trace has none). gpu: one value per GPU
// sample time, the latest value of each device summed; cgroup: the usage; hwm_sum: Σ VmHWM so far.
std::vector<MemSample> metric_series(const Trace& trace, Metric m);

// `dir:NAME`: the apparent size of a watched directory (DIR lines), NAME being its path as
// recorded or, when no path equals it, its last component (the first directory that matches).
// Such metrics are made on demand (parse_metric("dir:NAME") registers NAME for the process):
// they are not in all_metrics(), but available_metrics() lists those of a trace.
Metric dir_metric(std::string_view name);
bool is_dir_metric(Metric m);

}  // namespace qprof
