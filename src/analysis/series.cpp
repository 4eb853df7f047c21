// SPDX-License-Identifier: Apache-2.0
#include "series.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <unordered_map>
#include <stdexcept>

#include "qprof/common/units.hpp"
#include "qprof/trace/format.hpp"
#include "qprof/analysis/dirs.hpp"
#include "series.hpp"

namespace qprof::analysis::detail {
using trace::CgroupSample;
using trace::DirSample;
using trace::MemKindsSample;
using trace::MemSample;
using trace::PssSample;
using trace::Stage;
using trace::Trace;
using trace::WatchedDir;

std::optional<Bytes> peak_line(const Trace& t, std::string_view name) {
  const auto it = t.peaks.find(std::string(name));
  if (it == t.peaks.end()) return std::nullopt;
  return it->second;
}

// The highest sample; the first one when several are equal.
std::optional<MemSample> highest(const std::vector<MemSample>& series) {
  if (series.empty()) return std::nullopt;
  return *std::max_element(series.begin(), series.end(),
                           [](const MemSample& a, const MemSample& b) { return a.bytes < b.bytes; });
}

// The samples of a time-ordered series inside a window, found by binary search.
std::pair<std::vector<MemSample>::const_iterator, std::vector<MemSample>::const_iterator> samples_in(
    const std::vector<MemSample>& series, const TimeWindow& w) {
  const auto first = std::lower_bound(series.begin(), series.end(), w.from - kTimeSlack,
                                      [](const MemSample& s, Seconds v) { return s.t < v; });
  const auto last =
      std::upper_bound(first, series.end(), w.to + kTimeSlack, [](Seconds v, const MemSample& s) { return v < s.t; });
  return {first, last};
}

bool in_any(const std::vector<TimeWindow>& windows, Seconds t) {
  return std::any_of(windows.begin(), windows.end(), [t](const TimeWindow& w) { return w.contains(t); });
}

TimeWindow window_of(const Stage& s) { return {s.t_start, s.t_end}; }

// The latest sample at or before t (with the slack), if any.
std::optional<Bytes> value_at(const std::vector<MemSample>& series, Seconds t) {
  const auto it = std::upper_bound(series.begin(), series.end(), t + kTimeSlack,
                                   [](Seconds v, const MemSample& s) { return v < s.t; });
  if (it == series.begin()) return std::nullopt;
  return std::prev(it)->bytes;
}

// The highest sample inside any of the stages (a stage can run several times). For rss the memory
// at the markers counts too: it is the stage's own (an mprof FUNC line measures it itself).
std::optional<Peak> peak_in_stages(const std::vector<MemSample>& series, Metric m,
                                   const std::vector<const Stage*>& stages) {
  std::optional<Peak> best;
  auto consider = [&](Bytes b, Seconds when) {
    if (!best || b > best->bytes) best = Peak{b, when, false};
  };
  for (const Stage* s : stages) {
    if (m == Metric::rss) {
      consider(s->mem_start, s->t_start);
      consider(s->mem_end, s->t_end);
    }
    const auto [first, last] = samples_in(series, window_of(*s));
    for (auto it = first; it != last; ++it) consider(it->bytes, it->t);
  }
  return best;
}

PickContext pick_context(const Trace& t, Metric m) {
  PickContext c;
  c.cgroup = !t.cgroup.empty();
  if (m.kind == MetricKind::dir) {
    std::string name;
    if (const WatchedDir* d = dir_metric_info(m, &name) ? find_watched_dir(t, name) : nullptr) c.dir = d->index;
  }
  return c;
}

double round_to(double v, double step) { return std::round(v / step) * step; }

std::vector<MemSample> series_as_written(const Trace& t, Metric m) {
  std::vector<MemSample> out;
  switch (m.kind) {
    case MetricKind::dir: {
      std::string name;
      const WatchedDir* d = dir_metric_info(m, &name) ? find_watched_dir(t, name) : nullptr;
      if (!d) return out;
      for (const DirSample& s : t.dir_samples) {
        if (s.dir == d->index) out.push_back({s.t, s.apparent});
      }
      return out;
    }
    case MetricKind::rss:
      return t.mem;
    case MetricKind::pss:
    case MetricKind::uss:
      out.reserve(t.pss.size());
      for (const PssSample& s : t.pss) out.push_back({s.t, m == Metric::pss ? s.pss : s.uss});
      return out;
    case MetricKind::gpu: {
      // Devices are sampled together (one GPU line each, same time): one value per time, the
      // latest value of every device seen so far summed.
      // The sum is kept as devices change, not summed again per time: with many devices
      // that was quadratic (200 000 devices took a report 38 s). Unsigned: the updates cancel.
      std::unordered_map<int, Bytes> latest;
      Bytes sum = 0;
      for (std::size_t i = 0; i < t.gpu.size(); ++i) {
        Bytes& held = latest[t.gpu[i].device];
        sum += t.gpu[i].tree - held;
        held = t.gpu[i].tree;
        if (i + 1 < t.gpu.size() && t.gpu[i + 1].t == t.gpu[i].t) continue;
        out.push_back({t.gpu[i].t, sum});
      }
      return out;
    }
    case MetricKind::footprint:
      if (t.cgroup.empty()) {
        for (const PssSample& s : t.pss) {
          if (s.pss > 0) out.push_back({s.t, s.pss});
        }
        return out;
      }
      [[fallthrough]];
    case MetricKind::cgroup:
      out.reserve(t.cgroup.size());
      for (const CgroupSample& s : t.cgroup) out.push_back({s.t, s.usage});
      return out;
    case MetricKind::unreclaimable:
      if (t.cgroup.empty()) {
        for (const PssSample& s : t.pss) {
          if (s.unreclaimable) out.push_back({s.t, *s.unreclaimable});
        }
      } else {
        for (const CgroupSample& s : t.cgroup) {
          if (s.anon) out.push_back({s.t, *s.anon});
        }
      }
      return out;
    case MetricKind::hwm_sum:
      return t.hwm;
    case MetricKind::kernel_process:
      return out;
    case MetricKind::anon:
    case MetricKind::file:
    case MetricKind::shmem:
    case MetricKind::swap:
      out.reserve(t.kinds.size());
      for (const MemKindsSample& s : t.kinds) {
        const Bytes b = m == Metric::anon ? s.anon : m == Metric::file ? s.file : m == Metric::shmem ? s.shmem : s.swap;
        out.push_back({s.t, b});
      }
      return out;
  }
  return out;
}

}  // namespace qprof::analysis::detail
