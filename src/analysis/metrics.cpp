// SPDX-License-Identifier: Apache-2.0
#include "qprof/analysis/metric.hpp"
#include "qprof/analysis/dirs.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <stdexcept>

#include "qprof/common/units.hpp"
#include "qprof/trace/format.hpp"
#include "series.hpp"

namespace qprof::analysis {
using trace::CgroupSample;
using trace::DirSample;
using trace::MemSample;
using trace::PssSample;
using trace::Trace;
using trace::WatchedDir;

namespace {

const MetricInfo kMetrics[] = {
    {Metric::footprint, "footprint", "footprint",
     "the tree's memory, shared pages once (its cgroup's charge, else Σ PSS)", true},
    {Metric::unreclaimable, "unreclaimable", "unreclaimable",
     "anonymous and shared memory of the footprint, which cannot be dropped", true},
    {Metric::rss, "rss", "RSS", "RSS of the tree, sampled", true},
    {Metric::pss, "pss", "PSS", "PSS of the tree, sampled", true},
    {Metric::uss, "uss", "USS", "USS of the tree, sampled", true},
    {Metric::gpu, "gpu", "GPU", "GPU memory of the tree, sampled", true},
    {Metric::cgroup, "cgroup", "cgroup charge", "cgroup charge (includes page cache)", true},
    {Metric::hwm_sum, "hwm_sum", "VmHWM sum", "sum of each process's peak, an upper bound", false},
    {Metric::kernel_process, "kernel_process", "kernel", "largest single process, the kernel's peak, a lower bound",
     false},
    {Metric::anon, "anon", "anon RSS", "anonymous RSS of the tree (RssAnon), sampled", true},
    {Metric::file, "file", "file RSS", "file-backed RSS of the tree (RssFile, reclaimable), sampled", true},
    {Metric::shmem, "shmem", "shmem RSS", "shared-memory RSS of the tree (RssShmem, /dev/shm), sampled", true},
    {Metric::swap, "swap", "swap", "swapped-out memory of the tree (VmSwap), sampled", true},
};

}  // namespace

using namespace detail;

// ── Metrics ─────────────────────────────────────────────────────────────────────────────────

const MetricInfo& metric_info(Metric m) {
  if (const MetricInfo* dir = dir_metric_info(m)) return *dir;
  for (const MetricInfo& i : kMetrics) {
    if (i.metric == m) return i;
  }
  return kMetrics[0];
}

std::optional<Metric> parse_metric(std::string_view name) {
  if (name.size() > 4 && name.substr(0, 4) == "dir:") return dir_metric(name.substr(4));
  for (const MetricInfo& i : kMetrics) {
    if (i.name == name) return i.metric;
  }
  return std::nullopt;
}

const std::vector<Metric>& all_metrics() {
  static const std::vector<Metric> all = [] {
    std::vector<Metric> v;
    for (const MetricInfo& i : kMetrics) v.push_back(i.metric);
    return v;
  }();
  return all;
}

std::string metric_names(const std::vector<Metric>& metrics) {
  std::string out;
  for (Metric m : metrics) {
    if (!out.empty()) out += ", ";
    out += metric_info(m).name;
  }
  return out;
}

bool has_metric(const Trace& t, Metric m) {
  switch (m.kind) {
    case MetricKind::dir: {
      std::string name;
      const WatchedDir* d = dir_metric_info(m, &name) ? find_watched_dir(t, name) : nullptr;
      return d && std::any_of(t.dir_samples.begin(), t.dir_samples.end(),
                              [&](const DirSample& s) { return s.dir == d->index; });
    }
    case MetricKind::footprint:
      return !t.cgroup.empty() || std::any_of(t.pss.begin(), t.pss.end(), [](const PssSample& s) { return s.pss > 0; });
    case MetricKind::unreclaimable:
      return std::any_of(t.cgroup.begin(), t.cgroup.end(), [](const CgroupSample& s) { return s.anon.has_value(); }) ||
             (t.cgroup.empty() &&
              std::any_of(t.pss.begin(), t.pss.end(), [](const PssSample& s) { return s.unreclaimable.has_value(); }));
    case MetricKind::rss:
      return !t.mem.empty();
    case MetricKind::pss:
    case MetricKind::uss:
      return !t.pss.empty();
    case MetricKind::gpu:
      return !t.gpu.empty();
    case MetricKind::cgroup:
      return !t.cgroup.empty() || peak_line(t, trace::kPeakCgroup);
    case MetricKind::hwm_sum:
      return !t.hwm.empty() || peak_line(t, trace::kPeakHwmSum);
    case MetricKind::kernel_process:
      return peak_line(t, trace::kPeakKernelProcess).has_value();
    case MetricKind::anon:
    case MetricKind::file:
    case MetricKind::shmem:
    case MetricKind::swap:
      return !t.kinds.empty();
  }
  return false;
}

std::vector<Metric> available_metrics(const Trace& t) {
  std::vector<Metric> out;
  for (Metric m : all_metrics()) {
    if (has_metric(t, m)) out.push_back(m);
  }
  std::size_t dirs = 0;
  for (const DirGrowth& g : dir_growths(t)) {
    if (dirs++ == kMaxDirMetrics) break;
    out.push_back(dir_metric(g.name));
  }
  return out;
}

std::vector<MemSample> metric_series(const Trace& t, Metric m) {
  std::vector<MemSample> out = series_as_written(t, m);
  // Writers append in time order; a wall clock set back under mprof could break it.
  const auto by_time = [](const MemSample& a, const MemSample& b) { return a.t < b.t; };
  if (!std::is_sorted(out.begin(), out.end(), by_time)) std::stable_sort(out.begin(), out.end(), by_time);
  return out;
}

}  // namespace qprof::analysis
