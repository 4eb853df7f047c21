// SPDX-License-Identifier: Apache-2.0
// The records of a Quark-style report (Start, each marker, End) and the run's totals.
#include <algorithm>
#include <cmath>
#include <map>

#include "qprof/analysis/checkpoints.hpp"
#include "series.hpp"
#include "series_scan.hpp"

namespace qprof::analysis {
using trace::CgroupSample;
using trace::CpuSample;
using trace::GpuSample;
using trace::IoSample;
using trace::Marker;
using trace::MemSample;
using trace::PssSample;
using trace::Snapshot;
using trace::Trace;

using namespace detail;

namespace {
// How old the GPU figure of the Start (the devices' first lines) or End (their last lines)
// record is at `at`: the oldest part, each line's distance from `at` plus its tree figure's age.
Seconds gpu_figure_age(const Trace& t, Seconds at, bool first) {
  std::map<int, const GpuSample*> lines;
  for (const GpuSample& g : t.gpu) {
    if (!first || !lines.count(g.device)) lines[g.device] = &g;
  }
  Seconds age = 0;
  for (const auto& [device, g] : lines) age = std::max(age, std::fabs(at - g->t) + g->tree_age.value_or(0));
  return age;
}
}  // namespace

std::vector<Checkpoint> checkpoints(const Trace& t, bool with_end) {
  std::vector<Checkpoint> out;
  if (t.mem.empty()) return out;
  const std::vector<MemSample> gpu = metric_series(t, Metric::gpu);
  // The last sample of a live tree: older versions wrote a zero sample of zombies at the end.
  auto last = std::find_if(t.mem.rbegin(), t.mem.rend(), [](const MemSample& m) { return m.bytes > 0; });
  const MemSample& end_sample = last == t.mem.rend() ? t.mem.back() : *last;
  auto snapshot = [&](bool first) {
    Snapshot s;
    s.rss = first ? t.mem.front().bytes : end_sample.bytes;
    if (!t.pss.empty()) {
      const PssSample& p = first ? t.pss.front() : t.pss.back();
      s.pss = p.pss;
      s.uss = p.uss;
      // How far the PSS pass lies from the record's RSS sample: at Start the first pass may
      // come a little after it, at End the last one before it.
      s.pss_age = first ? std::fabs(p.t - t.mem.front().t) : std::max(0.0, end_sample.t - p.t);
    }
    if (!gpu.empty()) {
      const MemSample& g = first ? gpu.front() : gpu.back();
      s.gpu_tree = g.bytes;
      s.gpu_age = gpu_figure_age(t, first ? t.mem.front().t : end_sample.t, first);
    }
    if (!t.io.empty()) {
      const IoSample& io = first ? t.io.front() : t.io.back();
      s.read_bytes = io.read_bytes;
      s.write_bytes = io.write_bytes;
    }
    if (!t.cpu.empty()) s.cpu_seconds = first ? t.cpu.front().cpu_seconds : t.cpu.back().cpu_seconds;
    return s;
  };
  out.push_back({"Start", t.mem.front().t, snapshot(true)});
  for (const Marker& m : t.markers) out.push_back({m.label, m.t, m.at});
  // End: the values of the last sample, timestamped no earlier than any marker (a marker still
  // in the pipe when the tree exited is recorded after its last sample).
  Seconds end_t = end_sample.t;
  if (!t.markers.empty()) end_t = std::max(end_t, t.markers.back().t);
  if (with_end) out.push_back({"End", end_t, snapshot(false)});
  return out;
}

std::optional<IoSample> io_totals(const Trace& t) {
  if (t.io.empty()) return std::nullopt;
  return t.io.back();
}

namespace {

// The highest CPU rate over intervals of at least `min_interval`, the readings given in their
// order. Intervals shorter than the clock tick's resolution allows would show noise (a marker's
// extra sample right after a regular one): they are merged into the next, and a short tail into
// the last.
class CpuPeakScan {
 public:
  CpuPeakScan(CpuSample from, Seconds min_interval) : from_(from), min_interval_(min_interval) {}
  void add(const CpuSample& s) {
    last_ = s;
    if (s.t - from_.t < min_interval_) return;
    peak_ = std::max(peak_.value_or(0.0), rate(from_, s));
    before_ = from_;
    from_ = s;
  }
  std::optional<double> peak() const {
    // A measured interval (before_) means a peak.
    if (before_ && last_.t > from_.t) return std::max(peak_.value_or(0.0), rate(*before_, last_));
    return peak_;
  }

 private:
  static double rate(const CpuSample& a, const CpuSample& b) {
    return std::max(0.0, 100.0 * (b.cpu_seconds - a.cpu_seconds) / (b.t - a.t));
  }
  CpuSample from_;
  Seconds min_interval_;
  std::optional<CpuSample> before_;  // the start of the last measured interval
  CpuSample last_{};
  std::optional<double> peak_;
};

class CpuReader : public trace::Visitor {
 public:
  explicit CpuReader(CpuPeakScan& scan) : scan_(scan) {}
  bool skips(std::string_view kind) const override { return kind != "CPU"; }
  void cpu(const CpuSample& s) override { scan_.add(s); }

 private:
  CpuPeakScan& scan_;
};

}  // namespace

std::optional<CpuUse> cpu_use(const Trace& t, Seconds min_interval) {
  if (t.cpu.empty()) return std::nullopt;
  CpuUse u;
  u.seconds = t.cpu.back().cpu_seconds;
  // A qprof trace's CPU time is 0 at its start (attached: at the attach), so the first interval
  // starts there and the CPU time before the first reading is in it.
  const Seconds t0 = t.t0();
  CpuPeakScan scan(t.is_qprof() && t.cpu.front().t > t0 ? CpuSample{t0, 0.0} : t.cpu.front(), min_interval);
  if (t.reduced) {
    CpuReader reader(scan);  // a reduced trace keeps its first and last reading only
    scan_records(t, reader);
  } else {
    for (const CpuSample& s : t.cpu) scan.add(s);
  }
  u.peak_percent = scan.peak();
  return u;
}

std::optional<CgroupSample> largest_cgroup_sample(const Trace& t) {
  // The charge is read at every sample, memory.stat's parts with the stats: the largest reading
  // that has them, where any has, so that the parts are there to split it.
  const bool any_parts = std::any_of(t.cgroup.begin(), t.cgroup.end(), [](const CgroupSample& s) { return s.anon; });
  std::optional<CgroupSample> best;
  for (const CgroupSample& s : t.cgroup) {
    if (any_parts && !s.anon) continue;
    if (!best || s.usage > best->usage) best = s;
  }
  return best;
}

}  // namespace qprof::analysis
