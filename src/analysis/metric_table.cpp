// SPDX-License-Identifier: Apache-2.0
// The metric rows (metric_table.hpp): every fact about a metric that analysis, report and plot
// use, in one place.
#include "qprof/analysis/metric_table.hpp"

#include <algorithm>
#include <iterator>

#include "qprof/trace/format.hpp"
#include "series.hpp"

namespace qprof::analysis {
using detail::peak_line;
using trace::CgroupSample;
using trace::DirSample;
using trace::MemKindsSample;
using trace::MemSample;
using trace::PssSample;
using trace::Trace;

namespace {

using Value = std::optional<Bytes>;

// ── When a trace has a metric ─────────────────────────────────────────────────────────────────

bool has_footprint(const Trace& t, const PickContext&) {
  return !t.cgroup.empty() || std::any_of(t.pss.begin(), t.pss.end(), [](const PssSample& s) { return s.pss > 0; });
}
bool has_unreclaimable(const Trace& t, const PickContext&) {
  return std::any_of(t.cgroup.begin(), t.cgroup.end(),
                     [](const CgroupSample& s) { return s.unreclaimable().has_value(); }) ||
         (t.cgroup.empty() &&
          std::any_of(t.pss.begin(), t.pss.end(), [](const PssSample& s) { return s.unreclaimable.has_value(); }));
}
bool has_mem(const Trace& t, const PickContext&) { return !t.mem.empty(); }
bool has_pss(const Trace& t, const PickContext&) { return !t.pss.empty(); }
bool has_gpu(const Trace& t, const PickContext&) { return !t.gpu.empty(); }
bool has_cgroup(const Trace& t, const PickContext&) {
  return !t.cgroup.empty() || peak_line(t, trace::kPeakCgroup).has_value();
}
bool has_hwm(const Trace& t, const PickContext&) {
  return !t.hwm.empty() || peak_line(t, trace::kPeakHwmSum).has_value();
}
bool has_kernel_process(const Trace& t, const PickContext&) {
  return peak_line(t, trace::kPeakKernelProcess).has_value();
}
bool has_kinds(const Trace& t, const PickContext&) { return !t.kinds.empty(); }
bool has_dir(const Trace& t, const PickContext& c) {
  return c.dir &&
         std::any_of(t.dir_samples.begin(), t.dir_samples.end(), [&](const DirSample& s) { return s.dir == *c.dir; });
}

// ── Which lines give a metric's samples ───────────────────────────────────────────────────────

Value sample_bytes(const MemSample& s, const PickContext&) { return s.bytes; }
Value pss_of(const PssSample& s, const PickContext&) { return s.pss; }
Value uss_of(const PssSample& s, const PickContext&) { return s.uss; }
// Without a cgroup of its own, the footprint is Σ PSS (a pass that read nothing writes 0).
Value footprint_pss(const PssSample& s, const PickContext& c) {
  return !c.cgroup && s.pss > 0 ? Value(s.pss) : std::nullopt;
}
Value unreclaimable_pss(const PssSample& s, const PickContext& c) { return c.cgroup ? std::nullopt : s.unreclaimable; }
Value usage_of(const CgroupSample& s, const PickContext&) { return s.usage; }
Value unreclaimable_of_cgroup(const CgroupSample& s, const PickContext&) { return s.unreclaimable(); }
Value anon_of(const MemKindsSample& s, const PickContext&) { return s.anon; }
Value file_of(const MemKindsSample& s, const PickContext&) { return s.file; }
Value shmem_of(const MemKindsSample& s, const PickContext&) { return s.shmem; }
Value swap_of(const MemKindsSample& s, const PickContext&) { return s.swap; }
Value apparent_of(const DirSample& s, const PickContext& c) {
  return c.dir && s.dir == *c.dir ? Value(s.apparent) : std::nullopt;
}

constexpr MetricRow kRows[] = {
    {{Metric::footprint, "footprint", "footprint",
      "the tree's memory, shared pages once (its cgroup's charge, else Σ PSS)", true},
     "footprint",
     has_footprint,
     {.pss = footprint_pss, .cgroup = usage_of},
     PeakRule::footprint,
     AtMarker::footprint},
    {{Metric::unreclaimable, "unreclaimable", "unreclaimable",
      "anonymous and shared memory of the footprint, which cannot be dropped", true},
     "unreclaimable",
     has_unreclaimable,
     {.pss = unreclaimable_pss, .cgroup = unreclaimable_of_cgroup},
     PeakRule::highest_sample,
     AtMarker::series},
    {{Metric::rss, "rss", "RSS", "RSS of the tree, sampled", true},
     "tree RSS",
     has_mem,
     {.mem = sample_bytes},
     PeakRule::highest_sample,
     AtMarker::stage_memory},
    {{Metric::pss, "pss", "PSS", "PSS of the tree, sampled", true},
     "tree PSS",
     has_pss,
     {.pss = pss_of},
     PeakRule::highest_sample,
     AtMarker::pss},
    {{Metric::uss, "uss", "USS", "USS of the tree, sampled", true},
     "tree USS",
     has_pss,
     {.pss = uss_of},
     PeakRule::highest_sample,
     AtMarker::uss},
    {{Metric::gpu, "gpu", "GPU", "GPU memory of the tree, sampled", true},
     "tree GPU memory",
     has_gpu,
     {.gpu = true},
     PeakRule::highest_sample,
     AtMarker::series},
    {{Metric::cgroup, "cgroup", "cgroup charge", "cgroup charge (includes page cache)", true},
     "cgroup charge (includes page cache)",
     has_cgroup,
     {.cgroup = usage_of},
     PeakRule::charge,
     AtMarker::series},
    {{Metric::hwm_sum, "hwm_sum", "VmHWM sum", "sum of each process's peak, an upper bound", false},
     "Σ VmHWM",  // plot draws series only: it does not offer this one
     has_hwm,
     {.hwm = sample_bytes},
     PeakRule::hwm_bound,
     AtMarker::series},
    {{Metric::kernel_process, "kernel_process", "kernel", "largest single process, the kernel's peak, a lower bound",
      false},
     "largest process",  // no series: plot does not offer it
     has_kernel_process,
     {},
     PeakRule::kernel_end,
     AtMarker::series},
    {{Metric::anon, "anon", "anon RSS", "anonymous RSS of the tree (RssAnon), sampled", true},
     "tree anonymous RSS",
     has_kinds,
     {.kinds = anon_of},
     PeakRule::highest_sample,
     AtMarker::series},
    {{Metric::file, "file", "file RSS", "file-backed RSS of the tree (RssFile, reclaimable), sampled", true},
     "tree file-backed RSS",
     has_kinds,
     {.kinds = file_of},
     PeakRule::highest_sample,
     AtMarker::series},
    {{Metric::shmem, "shmem", "shmem RSS", "shared-memory RSS of the tree (RssShmem, /dev/shm), sampled", true},
     "tree shared-memory RSS",
     has_kinds,
     {.kinds = shmem_of},
     PeakRule::highest_sample,
     AtMarker::series},
    {{Metric::swap, "swap", "swap", "swapped-out memory of the tree (VmSwap), sampled", true},
     "tree swap",
     has_kinds,
     {.kinds = swap_of},
     PeakRule::highest_sample,
     AtMarker::series},
    // dir:NAME: one metric per watched directory (dirs.cpp names them); "size of NAME" in plots.
    {{Metric{MetricKind::dir}, "dir", "dir", "apparent size of a watched directory, sampled", true},
     "size of",
     has_dir,
     {.dir = apparent_of},
     PeakRule::highest_sample,
     AtMarker::series},
};

}  // namespace

std::span<const MetricRow> metric_rows() { return kRows; }

const MetricRow& metric_row(MetricKind kind) {
  for (const MetricRow& r : kRows) {
    if (r.info.metric.kind == kind) return r;
  }
  return kRows[0];
}

const MetricRow* metric_row_named(std::string_view name) {
  for (const MetricRow& r : kRows) {
    if (r.info.metric.kind != MetricKind::dir && r.info.name == name) return &r;
  }
  return nullptr;
}

bool is_charge(const MetricRow& row, const Trace& t) {
  return row.peak == PeakRule::charge || (row.peak == PeakRule::footprint && !t.cgroup.empty());
}

}  // namespace qprof::analysis
