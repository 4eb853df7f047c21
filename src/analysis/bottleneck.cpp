// SPDX-License-Identifier: Apache-2.0
#include "qprof/analysis/bottleneck.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "qprof/analysis/timeline.hpp"
#include "qprof/common/number_text.hpp"
#include "series_scan.hpp"

namespace qprof::analysis {
using trace::CpuSample;
using trace::GpuUtilSample;
using trace::IoSample;
using trace::Stage;
using trace::Trace;

namespace {

struct Point {
  Seconds t;
  double v;
};

// End minus start, signed. A trace's byte counts come from a file and may exceed what int64 holds;
// both are clamped first so that the difference never overflows (the fuzzer found one that did).
std::int64_t signed_growth(Bytes start, Bytes end) {
  constexpr Bytes kMax = static_cast<Bytes>(std::numeric_limits<std::int64_t>::max());
  return static_cast<std::int64_t>(std::min(end, kMax)) - static_cast<std::int64_t>(std::min(start, kMax));
}

struct RateStats {
  std::optional<double> mean, peak;
};

// Mean and peak rate of a cumulative counter over [t0, t1], from its readings inside the stage
// only (a reading before it would count time outside it): from the first to the last. The peak
// is over intervals of at least kMinRateInterval that cover that span, a short one merged into
// the next and a short tail into the last, so the mean (their weighted mean) is never above it.
// Fewer than two readings inside, or less than kMinRateInterval between them: no figure. The
// readings come one at a time, in time order (a reduced trace's are read from its file).
class RateScan {
 public:
  RateScan(Seconds t0, Seconds t1) : lo_(t0 - kTimeSlack), hi_(t1 + kTimeSlack) {}
  Seconds lo() const { return lo_; }
  Seconds hi() const { return hi_; }

  void add(const Point& p) {
    if (p.t < lo_ || p.t > hi_) return;
    if (n_++ == 0) {
      first_ = from_ = last_ = p;
      return;
    }
    last_ = p;
    from_is_last_ = false;
    if (p.t - from_.t < kMinRateInterval) return;
    peak_ = std::max(peak_.value_or(0.0), rate(from_, p));
    before_ = from_;
    from_ = p;
    from_is_last_ = true;
  }

  RateStats result() const {
    RateStats r;
    if (n_ < 2 || !(last_.t - first_.t >= kMinRateInterval)) return r;
    r.mean = rate(first_, last_);
    r.peak = peak_;
    if (!from_is_last_) r.peak = std::max(r.peak.value_or(0.0), rate(before_, last_));  // the short tail
    return r;
  }

 private:
  static double rate(const Point& x, const Point& y) { return std::max(0.0, (y.v - x.v) / (y.t - x.t)); }

  Seconds lo_, hi_;
  std::size_t n_ = 0;
  Point first_{}, from_{}, before_{}, last_{};
  bool from_is_last_ = true;
  std::optional<double> peak_;
};

// A stage's GPU busy percentages: their mean and highest.
struct GpuBusy {
  Seconds lo, hi;
  double sum = 0;
  std::size_t n = 0;
  std::optional<double> peak;
  void add(const GpuUtilSample& g) {
    if (g.t < lo || g.t > hi) return;
    sum += g.busy_percent;
    ++n;
    peak = std::max(peak.value_or(0.0), g.busy_percent);
  }
};

struct StageScans {
  RateScan cpu, read;
  GpuBusy gpu;
};

// Each stage's scans fed from a whole trace's vectors: its readings in time order.
void scan_vectors(const Trace& t, std::vector<StageScans>& scans) {
  std::vector<Point> cpu, read;
  cpu.reserve(t.cpu.size());
  for (const CpuSample& s : t.cpu) cpu.push_back({s.t, s.cpu_seconds});
  read.reserve(t.io.size());
  for (const IoSample& s : t.io) read.push_back({s.t, static_cast<double>(s.read_bytes)});
  const auto by_time = [](const Point& a, const Point& b) { return a.t < b.t; };
  std::stable_sort(cpu.begin(), cpu.end(), by_time);
  std::stable_sort(read.begin(), read.end(), by_time);
  const auto inside = [](const std::vector<Point>& v, const RateScan& r) {
    const auto first = std::lower_bound(v.begin(), v.end(), r.lo(), [](const Point& p, Seconds x) { return p.t < x; });
    return std::make_pair(first,
                          std::upper_bound(first, v.end(), r.hi(), [](Seconds x, const Point& p) { return x < p.t; }));
  };
  for (StageScans& s : scans) {
    for (auto [it, end] = inside(cpu, s.cpu); it != end; ++it) s.cpu.add(*it);
    for (auto [it, end] = inside(read, s.read); it != end; ++it) s.read.add(*it);
    for (const GpuUtilSample& g : t.gpu_util) s.gpu.add(g);
  }
}

// The same from a reduced trace's file (its CPU, I/O and GPU readings are in time order): each
// reading goes to the stages whose window holds it.
class StageScanReader : public trace::Visitor {
 public:
  explicit StageScanReader(std::vector<StageScans>& scans) : scans_(scans) {
    order_.resize(scans.size());
    for (std::size_t i = 0; i < order_.size(); ++i) order_[i] = i;
    std::stable_sort(order_.begin(), order_.end(),
                     [&](std::size_t a, std::size_t b) { return scans[a].cpu.lo() < scans[b].cpu.lo(); });
  }
  // The file was read whole once already: only these lines are parsed again.
  bool skips(std::string_view kind) const override { return kind != "CPU" && kind != "IO" && kind != "GPUUTIL"; }
  void cpu(const CpuSample& s) override {
    for_stages(cpu_, s.t, [&](StageScans& st) { st.cpu.add({s.t, s.cpu_seconds}); });
  }
  void io(const IoSample& s) override {
    for_stages(io_, s.t, [&](StageScans& st) { st.read.add({s.t, static_cast<double>(s.read_bytes)}); });
  }
  void gpu_util(const GpuUtilSample& g) override {
    for_stages(gpu_, g.t, [&](StageScans& st) { st.gpu.add(g); });
  }

 private:
  struct Sweep {
    std::size_t next = 0;
    std::vector<std::size_t> active;
  };
  template <typename Fn>
  void for_stages(Sweep& w, Seconds t, Fn fn) {
    while (w.next < order_.size() && scans_[order_[w.next]].cpu.lo() <= t) w.active.push_back(order_[w.next++]);
    std::erase_if(w.active, [&](std::size_t i) { return scans_[i].cpu.hi() < t; });
    for (std::size_t i : w.active) fn(scans_[i]);
  }
  std::vector<StageScans>& scans_;
  std::vector<std::size_t> order_;  // stages by the start of their window
  Sweep cpu_, io_, gpu_;
};

void judge(StageBottleneck& b) {
  if (!b.gpu_mean_percent || b.t_end - b.t_start < kMinVerdictSeconds) return;
  if (*b.gpu_mean_percent >= kGpuIdleBelowPercent) return;
  if (!b.gpu_peak_percent || *b.gpu_peak_percent < kGpuUsedPercent) return;  // no GPU work to starve
  const bool reading = b.read_mean_bytes_per_s && *b.read_mean_bytes_per_s >= kInputReadBytesPerSecond;
  const bool computing = b.cpu_mean_percent && *b.cpu_mean_percent >= kCpuBusyPercent;
  if (!reading && !computing) return;
  std::string why = "GPU busy " + printf_number("%.0f", *b.gpu_mean_percent) + " % while ";
  if (reading) why += "reading " + printf_number("%.0f", *b.read_mean_bytes_per_s / 1e6) + " MB/s";
  if (reading && computing) why += " and ";
  if (computing) why += "the CPU runs at " + printf_number("%.0f", *b.cpu_mean_percent) + " % of one core";
  b.input_bound = true;
  b.verdict = why + ": likely input-bound";
}

}  // namespace

std::vector<StageBottleneck> stage_bottlenecks(const Trace& t) {
  std::vector<StageScans> scans;
  for (const Stage& s : t.stages) {
    scans.push_back({RateScan(s.t_start, s.t_end), RateScan(s.t_start, s.t_end),
                     GpuBusy{s.t_start - kTimeSlack, s.t_end + kTimeSlack, 0, 0, std::nullopt}});
  }
  if (t.reduced) {
    StageScanReader reader(scans);
    detail::scan_records(t, reader);
  } else {
    scan_vectors(t, scans);
  }
  std::vector<StageBottleneck> out;
  for (std::size_t i = 0; i < t.stages.size(); ++i) {
    const Stage& s = t.stages[i];
    StageBottleneck b;
    b.stage = s.name;
    b.t_start = s.t_start;
    b.t_end = s.t_end;
    b.closed = s.closed;
    if (const RateStats c = scans[i].cpu.result(); c.mean) {
      b.cpu_mean_percent = 100.0 * *c.mean;
      b.cpu_peak_percent = 100.0 * *c.peak;
    }
    if (const RateStats r = scans[i].read.result(); r.mean) {
      b.read_mean_bytes_per_s = r.mean;
      b.read_peak_bytes_per_s = r.peak;
    }
    const GpuBusy& g = scans[i].gpu;
    b.gpu_peak_percent = g.peak;
    if (g.n > 0) b.gpu_mean_percent = g.sum / static_cast<double>(g.n);
    b.memory_growth = signed_growth(s.mem_start, s.mem_end);
    judge(b);
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace qprof::analysis
