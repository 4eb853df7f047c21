// SPDX-License-Identifier: Apache-2.0
// A reduced trace's file read again for the figures that need every sample of a series.
#include "series_scan.hpp"

#include <algorithm>
#include <unordered_map>

#include "qprof/analysis/dirs.hpp"
#include "qprof/trace/format.hpp"
#include "series.hpp"

namespace qprof::analysis::detail {
using trace::CgroupSample;
using trace::DirSample;
using trace::GpuSample;
using trace::MemKindsSample;
using trace::MemSample;
using trace::PssSample;
using trace::Trace;

namespace {

// Feeds `each` the samples of one metric's series in file order, as series_as_written makes them
// from a whole trace; `cgroup`: the trace has cgroup lines (the footprint is then the charge).
class SeriesVisitor : public trace::Visitor {
 public:
  SeriesVisitor(const Trace& t, Metric m, const SampleSink& each) : m_(m), each_(each) {
    cgroup_ = !t.cgroup.empty();
    if (m.kind == MetricKind::dir) {
      std::string name;
      const trace::WatchedDir* d = dir_metric_info(m, &name) ? find_watched_dir(t, name) : nullptr;
      dir_ = d ? d->index : -1;
    }
  }

  void mem(const MemSample& s) override {
    if (m_.kind == MetricKind::rss) each_(s);
  }
  void hwm(const MemSample& s) override {
    if (m_.kind == MetricKind::hwm_sum) each_(s);
  }
  void pss(const PssSample& s) override {
    switch (m_.kind) {
      case MetricKind::pss:
      case MetricKind::uss:
        each_({s.t, m_ == Metric::pss ? s.pss : s.uss});
        break;
      case MetricKind::footprint:
        if (!cgroup_ && s.pss > 0) each_({s.t, s.pss});
        break;
      case MetricKind::unreclaimable:
        if (!cgroup_ && s.unreclaimable) each_({s.t, *s.unreclaimable});
        break;
      default:
        break;
    }
  }
  void cgroup(const CgroupSample& s) override {
    if (m_.kind == MetricKind::cgroup || m_.kind == MetricKind::footprint) each_({s.t, s.usage});
    if (m_.kind == MetricKind::unreclaimable && s.anon) each_({s.t, *s.anon});
  }
  void kinds(const MemKindsSample& s) override {
    if (m_ == Metric::anon) each_({s.t, s.anon});
    if (m_ == Metric::file) each_({s.t, s.file});
    if (m_ == Metric::shmem) each_({s.t, s.shmem});
    if (m_ == Metric::swap) each_({s.t, s.swap});
  }
  void dir(const DirSample& s) override {
    if (m_.kind == MetricKind::dir && s.dir == dir_) each_({s.t, s.apparent});
  }
  // One value per time: the latest of every device seen so far, summed, once the time's lines end.
  void gpu(const GpuSample& s) override {
    if (m_.kind != MetricKind::gpu) return;
    if (pending_ && pending_t_ != s.t) each_({pending_t_, sum_});
    Bytes& held = latest_[s.device];
    sum_ += s.tree - held;
    held = s.tree;
    pending_ = true;
    pending_t_ = s.t;
  }
  void finish() {
    if (pending_) each_({pending_t_, sum_});
  }

 private:
  Metric m_;
  const SampleSink& each_;
  bool cgroup_ = false;
  int dir_ = -1;
  std::unordered_map<int, Bytes> latest_;
  Bytes sum_ = 0;
  bool pending_ = false;
  Seconds pending_t_ = 0;
};

// The records, to each metric's visitor in turn.
class FanOut : public trace::Visitor {
 public:
  FanOut(std::vector<SeriesVisitor>& to, const std::vector<Metric>& metrics) : to_(to) {
    for (Metric m : metrics) {
      switch (m.kind) {
        case MetricKind::pss:
        case MetricKind::uss:
          reads_.push_back("PSS");
          break;
        case MetricKind::footprint:
        case MetricKind::unreclaimable:
          reads_.insert(reads_.end(), {"PSS", "CGROUP"});
          break;
        case MetricKind::cgroup:
          reads_.push_back("CGROUP");
          break;
        case MetricKind::hwm_sum:
          reads_.push_back("HWM");
          break;
        case MetricKind::anon:
        case MetricKind::file:
        case MetricKind::shmem:
        case MetricKind::swap:
          reads_.push_back("KINDS");
          break;
        case MetricKind::dir:
          reads_.push_back("DIR");
          break;
        case MetricKind::gpu:
          reads_.push_back("GPU");
          break;
        case MetricKind::rss:  // MEM lines: always given
        case MetricKind::kernel_process:
          break;
      }
    }
  }
  // The file was read whole once already: lines of other kinds need not be parsed again.
  bool skips(std::string_view kind) const override {
    return std::find(reads_.begin(), reads_.end(), kind) == reads_.end();
  }
  void mem(const MemSample& s) override {
    for (auto& v : to_) v.mem(s);
  }
  void hwm(const MemSample& s) override {
    for (auto& v : to_) v.hwm(s);
  }
  void pss(const PssSample& s) override {
    for (auto& v : to_) v.pss(s);
  }
  void cgroup(const CgroupSample& s) override {
    for (auto& v : to_) v.cgroup(s);
  }
  void kinds(const MemKindsSample& s) override {
    for (auto& v : to_) v.kinds(s);
  }
  void dir(const DirSample& s) override {
    for (auto& v : to_) v.dir(s);
  }
  void gpu(const GpuSample& s) override {
    for (auto& v : to_) v.gpu(s);
  }

 private:
  std::vector<SeriesVisitor>& to_;
  std::vector<std::string_view> reads_;  // the kinds its metrics read
};

}  // namespace

void scan_records(const Trace& t, trace::Visitor& visitor) {
  trace::parse_file_prefix(t.reduced ? t.reduced->file : t.source, t.reduced ? t.reduced->bytes : 0, visitor);
}

void scan_series(const Trace& t, const std::vector<Metric>& metrics, const IndexedSink& each) {
  if (!t.reduced) {
    for (std::size_t i = 0; i < metrics.size(); ++i) {
      for (const MemSample& s : metric_series(t, metrics[i])) each(i, s);
    }
    return;
  }
  std::vector<SampleSink> sinks;
  for (std::size_t i = 0; i < metrics.size(); ++i) sinks.push_back([&each, i](const MemSample& s) { each(i, s); });
  std::vector<SeriesVisitor> series;
  series.reserve(metrics.size());
  for (std::size_t i = 0; i < metrics.size(); ++i) series.emplace_back(t, metrics[i], sinks[i]);
  FanOut all(series, metrics);
  scan_records(t, all);
  for (SeriesVisitor& v : series) v.finish();
}

}  // namespace qprof::analysis::detail
