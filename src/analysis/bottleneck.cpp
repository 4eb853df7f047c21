// SPDX-License-Identifier: Apache-2.0
#include "qprof/analysis/bottleneck.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "qprof/analysis/timeline.hpp"
#include "qprof/common/number_text.hpp"

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
// Fewer than two readings inside, or less than kMinRateInterval between them: no figure.
RateStats rates(const std::vector<Point>& cumulative, Seconds t0, Seconds t1) {
  RateStats r;
  const auto first = std::lower_bound(cumulative.begin(), cumulative.end(), t0 - kTimeSlack,
                                      [](const Point& p, Seconds t) { return p.t < t; });
  const auto last =
      std::upper_bound(first, cumulative.end(), t1 + kTimeSlack, [](Seconds t, const Point& p) { return t < p.t; });
  if (last - first < 2) return r;
  const Point& a = *first;
  const Point& b = *(last - 1);
  if (!(b.t - a.t >= kMinRateInterval)) return r;
  const auto rate = [](const Point& x, const Point& y) { return std::max(0.0, (y.v - x.v) / (y.t - x.t)); };
  r.mean = rate(a, b);
  const Point* from = &a;
  const Point* before = nullptr;  // the start of the last measured interval
  for (auto it = first + 1; it != last; ++it) {
    if (it->t - from->t < kMinRateInterval) continue;
    r.peak = std::max(r.peak.value_or(0.0), rate(*from, *it));
    before = from;
    from = &*it;
  }
  if (from != &b) r.peak = std::max(r.peak.value_or(0.0), rate(*before, b));  // the short tail
  return r;
}

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
  std::vector<Point> cpu, read;
  cpu.reserve(t.cpu.size());
  for (const CpuSample& s : t.cpu) cpu.push_back({s.t, s.cpu_seconds});
  read.reserve(t.io.size());
  for (const IoSample& s : t.io) read.push_back({s.t, static_cast<double>(s.read_bytes)});
  const auto by_time = [](const Point& a, const Point& b) { return a.t < b.t; };
  std::stable_sort(cpu.begin(), cpu.end(), by_time);
  std::stable_sort(read.begin(), read.end(), by_time);

  std::vector<StageBottleneck> out;
  for (const Stage& s : t.stages) {
    StageBottleneck b;
    b.stage = s.name;
    b.t_start = s.t_start;
    b.t_end = s.t_end;
    b.closed = s.closed;
    if (const RateStats c = rates(cpu, s.t_start, s.t_end); c.mean) {
      b.cpu_mean_percent = 100.0 * *c.mean;
      b.cpu_peak_percent = 100.0 * *c.peak;
    }
    if (const RateStats r = rates(read, s.t_start, s.t_end); r.mean) {
      b.read_mean_bytes_per_s = r.mean;
      b.read_peak_bytes_per_s = r.peak;
    }
    double sum = 0;
    std::size_t n = 0;
    for (const GpuUtilSample& g : t.gpu_util) {
      if (g.t < s.t_start - kTimeSlack || g.t > s.t_end + kTimeSlack) continue;
      sum += g.busy_percent;
      ++n;
      b.gpu_peak_percent = std::max(b.gpu_peak_percent.value_or(0.0), g.busy_percent);
    }
    if (n > 0) b.gpu_mean_percent = sum / static_cast<double>(n);
    b.memory_growth = signed_growth(s.mem_start, s.mem_end);
    judge(b);
    out.push_back(std::move(b));
  }
  return out;
}

}  // namespace qprof::analysis
