// SPDX-License-Identifier: Apache-2.0
#include "qprof/analysis/job.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

#include "qprof/common/trace_label.hpp"
#include "qprof/analysis/checkpoints.hpp"
#include "qprof/analysis/peaks.hpp"
#include "qprof/analysis/timeline.hpp"
#include "qprof/common/units.hpp"
#include "qprof/trace/format.hpp"
#include "sum_walk.hpp"

namespace qprof::analysis {
using trace::GpuDevice;
using trace::GpuSample;
using trace::IoSample;
using trace::MemSample;
using trace::Stage;
using trace::Trace;

JobClock job_clock(const std::vector<const Trace*>& traces, Align align) {
  JobClock c;
  c.offset.reserve(traces.size());
  if (align == Align::start) {
    for (const Trace* t : traces) c.offset.push_back(t->t0());
    return c;
  }
  Seconds earliest = std::numeric_limits<Seconds>::infinity();
  for (const Trace* t : traces) earliest = std::min(earliest, t->t0());
  if (!std::isfinite(earliest)) earliest = 0;
  c.origin = earliest;
  c.offset.assign(traces.size(), earliest);
  return c;
}

bool has_series_over_time(Metric m) { return metric_info(m).windowed; }

Metric job_footprint_metric(const std::vector<const Trace*>& traces, Metric m) {
  if (m != Metric::footprint || detail::job_sums_cgroup(traces) || !detail::job_sums_pss(traces)) return m;
  return Metric::pss;
}

namespace {

struct Event {
  Seconds t;
  std::size_t trace;
  Bytes bytes;
};

// Walks the merged samples of every trace's series (`series_of(i)`) in time order, handing
// (time, sum, values) to `f` once per distinct time.
template <typename S, typename F>
void walk_series(const std::vector<const Trace*>& traces, Align align, S&& series_of, F&& f) {
  const JobClock clock = job_clock(traces, align);
  std::vector<Event> events;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    const std::vector<MemSample> series = series_of(i);
    if (series.empty()) continue;
    for (const MemSample& s : series) events.push_back({s.t - clock.offset[i], i, s.bytes});
    // After its end the trace's tree is gone: it holds nothing.
    const Seconds end = std::max(trace_end(*traces[i]), series.back().t) - clock.offset[i];
    events.push_back({std::nextafter(end, std::numeric_limits<Seconds>::infinity()), i, 0});
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.t < b.t; });
  std::vector<Bytes> current(traces.size(), 0);
  Bytes sum = 0;
  for (std::size_t k = 0; k < events.size(); ++k) {
    const Event& e = events[k];
    sum = sum - current[e.trace] + e.bytes;
    current[e.trace] = e.bytes;
    if (k + 1 < events.size() && events[k + 1].t == e.t) continue;
    f(e.t, sum, current);
  }
}

// Traces read reduced are summed from their files, rank by rank as they stream (flat in memory).
// The footprint is summed like for like (job_footprint_metric).
template <typename F>
void walk_sum(const std::vector<const Trace*>& traces, Metric asked, Align align, F&& f) {
  const Metric m = job_footprint_metric(traces, asked);
  if (!traces.empty() && detail::all_reduced(traces)) {
    detail::SumWalk walk(traces, m, align);
    Seconds t = 0;
    Bytes sum = 0;
    while (walk.next(t, sum)) f(t, sum, walk.each());
    return;
  }
  walk_series(
      traces, align, [&](std::size_t i) { return metric_series(*traces[i], m); }, f);
}

// One GPU device of the job: the same device (host and UUID) seen by several ranks, which share
// it; `index[i]` is its index in trace i, -1 where that trace did not see it.
struct JobDevice {
  std::string host, uuid, name;
  Bytes total = 0;
  std::vector<int> index;
};

std::vector<JobDevice> job_devices(const std::vector<const Trace*>& traces) {
  std::vector<JobDevice> out;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    for (const GpuDevice& d : traces[i]->gpu_devices) {
      const std::string& host = traces[i]->meta.host;
      auto it =
          std::find_if(out.begin(), out.end(), [&](const JobDevice& j) { return j.host == host && j.uuid == d.uuid; });
      if (it == out.end()) {
        out.push_back({host, d.uuid, d.name, d.total, std::vector<int>(traces.size(), -1)});
        it = std::prev(out.end());
      }
      it->index[i] = d.index;
    }
  }
  return out;
}

// The job's GPU series: per device, the ranks' tree figures summed (ranks on one host share its
// devices) and the device's own use as the latest any rank saw.
void add_job_gpu(const std::vector<const Trace*>& traces, Align align, Seconds origin, Trace& job) {
  const std::vector<JobDevice> devices = job_devices(traces);
  for (std::size_t k = 0; k < devices.size(); ++k) {
    const JobDevice& d = devices[k];
    const int index = static_cast<int>(k);
    job.gpu_devices.push_back(GpuDevice{index, d.uuid, (d.host.empty() ? "" : d.host + ": ") + d.name, d.total});
    auto series = [&](bool tree) {
      return [&, tree](std::size_t i) {
        std::vector<MemSample> s;
        if (d.index[i] < 0) return s;
        for (const GpuSample& g : traces[i]->gpu) {
          if (g.device == d.index[i]) s.push_back({g.t, tree ? g.tree : g.used});
        }
        return s;
      };
    };
    std::vector<GpuSample> samples;
    walk_series(traces, align, series(true), [&](Seconds t, Bytes sum, const std::vector<Bytes>&) {
      samples.push_back({origin + t, index, sum, 0, std::nullopt});
    });
    std::size_t n = 0;
    walk_series(traces, align, series(false), [&](Seconds, Bytes, const std::vector<Bytes>& each) {
      if (n < samples.size()) samples[n++].used = *std::max_element(each.begin(), each.end());
    });
    job.gpu.insert(job.gpu.end(), samples.begin(), samples.end());
  }
  std::stable_sort(job.gpu.begin(), job.gpu.end(), [](const GpuSample& a, const GpuSample& b) { return a.t < b.t; });
}

}  // namespace

std::vector<MemSample> summed_series(const std::vector<const Trace*>& traces, Metric m, Align align) {
  std::vector<MemSample> out;
  walk_sum(traces, m, align, [&](Seconds t, Bytes sum, const std::vector<Bytes>&) { out.push_back({t, sum}); });
  return out;
}

namespace {

// A rank whose own peak is its cgroup's high-water mark, which the kernel keeps between samples:
// a spike shorter than the interval, that no sum of samples holds. When it came, the job held at
// least the mark plus what the other ranks held then; the least of that, over the span it can have
// come in, is a floor of the job's peak.
struct KernelMark {
  std::size_t rank = 0;
  Bytes bytes = 0;
  // Where the mark can have come, on the job's clock: before the first record that read it, since
  // the record before, else the rank's whole run.
  Seconds from = 0, to = 0;
  Bytes sampled = 0;  // the highest sample of the rank
  std::optional<Bytes> others_least;
  Seconds least_at = 0;
  std::vector<Bytes> each_then;
  std::optional<Bytes> others_before;  // at the last step before `from`: what held when the span began
  std::vector<Bytes> each_before;
  Seconds before_at = 0;
};

// The last CGROUP record before `at`, which had not read the mark yet; else -infinity: the mark
// can have come any time before (the span is then the rank's run up to `at`).
Seconds record_before(const Trace& t, Seconds at) {
  const auto it = std::partition_point(t.cgroup.begin(), t.cgroup.end(),
                                       [&](const trace::CgroupSample& s) { return s.t < at - kTimeSlack; });
  return it == t.cgroup.begin() ? -std::numeric_limits<Seconds>::infinity() : std::prev(it)->t;
}

std::vector<KernelMark> kernel_marks(const std::vector<const Trace*>& traces, Metric asked, Align align) {
  const Metric m = job_footprint_metric(traces, asked);
  std::vector<KernelMark> marks;
  const JobClock clock = job_clock(traces, align);
  for (std::size_t i = 0; i < traces.size(); ++i) {
    const auto own = find_peak(*traces[i], m);
    if (!own || !own->exact) continue;
    KernelMark k;
    k.rank = i;
    k.bytes = own->bytes;
    k.from = traces[i]->t0() - clock.offset[i];
    k.to = trace_end(*traces[i]) - clock.offset[i];
    if (own->t) {
      k.to = std::min(k.to, *own->t - clock.offset[i]);
      k.from = std::max(k.from, record_before(*traces[i], *own->t) - clock.offset[i]);
    }
    marks.push_back(std::move(k));
  }
  return marks;
}

void least_others(KernelMark& k, Bytes others, Seconds t, const std::vector<Bytes>& each) {
  if (k.others_least && others >= *k.others_least) return;
  k.others_least = others;
  k.least_at = t;
  k.each_then = each;
}

void watch_marks(std::vector<KernelMark>& marks, Seconds t, Bytes sum, const std::vector<Bytes>& each) {
  for (KernelMark& k : marks) {
    k.sampled = std::max(k.sampled, each[k.rank]);
    const Bytes others = sum - each[k.rank];
    if (t < k.from) {
      k.others_before = others;
      k.each_before = each;
      k.before_at = t;
      continue;
    }
    if (t > k.to) continue;
    // What held before the span counts only where no step falls on `from` itself: a step there
    // (the rank's own record before is one) holds from the span's start on.
    if (k.others_before && t > k.from) least_others(k, *k.others_before, k.before_at, k.each_before);
    k.others_before.reset();
    least_others(k, others, t, each);
  }
}

}  // namespace

std::optional<JobPeak> job_peak(const std::vector<const Trace*>& traces, Metric m, Align align) {
  std::optional<JobPeak> best;
  std::vector<KernelMark> marks = kernel_marks(traces, m, align);
  walk_sum(traces, m, align, [&](Seconds t, Bytes sum, const std::vector<Bytes>& each) {
    if (!best || sum > best->bytes) best = JobPeak{sum, t, each, std::nullopt};
    watch_marks(marks, t, sum, each);
  });
  for (KernelMark& k : marks) {
    if (k.bytes <= k.sampled || !k.others_least) continue;  // a sample read it: the sum has it
    const Bytes floor = k.bytes + *k.others_least;
    if (best && floor <= best->bytes) continue;
    k.each_then[k.rank] = k.bytes;
    best = JobPeak{floor, k.least_at, std::move(k.each_then), k.rank};
  }
  return best;
}

std::vector<HostGroup> group_by_host(const std::vector<const Trace*>& traces) {
  std::vector<HostGroup> groups;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    const std::string host = traces[i]->meta.host.empty() ? "unknown" : traces[i]->meta.host;
    auto it = std::find_if(groups.begin(), groups.end(), [&](const HostGroup& g) { return g.host == host; });
    if (it == groups.end()) {
      groups.push_back({host, {}});
      it = std::prev(groups.end());
    }
    it->traces.push_back(i);
  }
  return groups;
}

std::vector<JobStage> job_stages(const std::vector<const Trace*>& traces, Align align) {
  const JobClock clock = job_clock(traces, align);
  std::vector<JobStage> out;
  std::map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < traces.size(); ++i) {
    // A stage run several times in one rank is one run of its span there, start to last end.
    std::map<std::string, std::pair<Seconds, Seconds>> own;
    std::map<std::string, bool> own_closed;
    std::vector<std::string> order;
    for (const Stage& s : traces[i]->stages) {
      auto [it, fresh] = own.try_emplace(s.name, s.t_start, s.t_end);
      if (fresh) {
        order.push_back(s.name);
        own_closed[s.name] = s.closed;
      } else {
        it->second.first = std::min(it->second.first, s.t_start);
        it->second.second = std::max(it->second.second, s.t_end);
        own_closed[s.name] = own_closed[s.name] && s.closed;
      }
    }
    for (const std::string& name : order) {
      const auto [from, to] = own[name];
      const Seconds start = from - clock.offset[i], end = to - clock.offset[i];
      auto [it, fresh] = index.try_emplace(name, out.size());
      if (fresh) {
        out.push_back(JobStage{name, start, end, 0, i, to - from, own_closed[name]});
      }
      JobStage& js = out[it->second];
      js.start = std::min(js.start, start);
      js.end = std::max(js.end, end);
      js.closed = js.closed && own_closed[name];
      ++js.ranks;
      if (to - from > js.slowest_duration) {
        js.slowest_duration = to - from;
        js.slowest = i;
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const JobStage& a, const JobStage& b) { return a.start < b.start; });
  return out;
}

std::optional<std::string> clock_skew_note(const std::vector<const Trace*>& traces, Seconds tolerance) {
  // Per job id, the earliest start of each host.
  std::map<std::string, std::map<std::string, Seconds>> starts;
  for (const Trace* t : traces) {
    if (t->meta.job.job_id.empty() || !t->meta.start) continue;
    auto& host_start = starts[t->meta.job.job_id];
    auto [it, fresh] = host_start.try_emplace(t->meta.host, *t->meta.start);
    if (!fresh) it->second = std::min(it->second, *t->meta.start);
  }
  for (const auto& [job, hosts] : starts) {
    if (hosts.size() < 2) continue;
    const auto [lo, hi] = std::minmax_element(hosts.begin(), hosts.end(),
                                              [](const auto& a, const auto& b) { return a.second < b.second; });
    const Seconds gap = hi->second - lo->second;
    if (gap <= tolerance) continue;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f", gap);
    return "job " + job + ": host " + hi->first + " started " + buf + " s after host " + lo->first +
           " (clock skew between hosts, or a re-launch; --align start lays each trace from its own start)";
  }
  return std::nullopt;
}

std::string kernel_floor_note(const Trace& rank, Bytes mark) {
  return rank_label(rank) + "'s own peak (" + human_bytes(mark) +
         ", its cgroup's high-water mark) came between its samples: the job's figure is it plus the least "
         "the other ranks were sampled at while it can have come; a smaller --interval catches the moment";
}

namespace detail {

Trace job_head(const std::vector<const Trace*>& traces, Align align) {
  Trace job;
  job.source = "job";
  job.meta.format_version = 1;
  const JobClock clock = job_clock(traces, align);
  const Seconds origin = clock.origin;
  job.meta.start = origin;
  job.cmdline = "job of " + std::to_string(traces.size()) + " traces";
  const auto groups = group_by_host(traces);
  if (groups.size() == 1) job.meta.host = groups.front().host;
  if (!traces.empty()) job.meta.job = traces.front()->meta.job;
  job.meta.job.rank.reset();
  job.meta.job.local_rank.reset();
  IoSample io;
  double cpu = 0;
  bool any_io = false, any_cpu = false;
  for (const Trace* t : traces) {
    if (const auto totals = io_totals(*t)) {
      any_io = true;
      io.read_bytes += totals->read_bytes;
      io.write_bytes += totals->write_bytes;
      io.rchar += totals->rchar;
      io.wchar += totals->wchar;
    }
    if (!t->cpu.empty()) {
      any_cpu = true;
      cpu += t->cpu.back().cpu_seconds;
    }
  }
  Seconds end = origin;
  for (std::size_t i = 0; i < traces.size(); ++i) end = std::max(end, trace_end(*traces[i]) - clock.offset[i] + origin);
  if (any_io) {
    job.io.push_back({origin, 0, 0, 0, 0});
    io.t = end;
    job.io.push_back(io);
  }
  if (any_cpu) job.cpu.push_back({end, cpu});
  // A rank's spike that only its cgroup's high-water mark kept: the job's charge peaked at least
  // that high, as PEAK cgroup (the job's footprint and cgroup peak then say so, without a moment).
  if (job_sums_cgroup(traces)) {
    if (const auto peak = job_peak(traces, Metric::cgroup, align); peak && peak->kernel_rank) {
      job.peaks[std::string(trace::kPeakCgroup)] = peak->bytes;
      job.notes.push_back(kernel_floor_note(*traces[*peak->kernel_rank], peak->each[*peak->kernel_rank]));
    }
  }
  for (const JobStage& s : job_stages(traces, align)) {
    Stage st;
    st.name = s.name;
    st.t_start = origin + s.start;
    st.t_end = origin + s.end;
    st.closed = s.closed;
    job.stages.push_back(std::move(st));
  }
  return job;
}

bool job_sums_pss(const std::vector<const Trace*>& traces) {
  return std::all_of(traces.begin(), traces.end(), [&](const Trace* t) { return has_metric(*t, Metric::pss); });
}

bool job_sums_cgroup(const std::vector<const Trace*>& traces) {
  // Samples of the charge, not a PEAK cgroup line alone: that rank would add nothing to the sum.
  return std::all_of(traces.begin(), traces.end(), [](const Trace* t) { return !t->cgroup.empty(); });
}

trace::CgroupSample job_charge(Seconds t, Bytes sum, Bytes& high) {
  high = std::max(high, sum);
  return trace::CgroupSample{t, sum, high, std::nullopt, std::nullopt, std::nullopt};
}

}  // namespace detail

Trace job_trace(const std::vector<const Trace*>& traces, Align align) {
  Trace job = detail::job_head(traces, align);
  const Seconds origin = job_clock(traces, align).origin;
  for (const MemSample& s : summed_series(traces, Metric::rss, align)) job.mem.push_back({origin + s.t, s.bytes});
  if (detail::job_sums_pss(traces)) {
    const auto pss = summed_series(traces, Metric::pss, align);
    const auto uss = summed_series(traces, Metric::uss, align);
    for (std::size_t i = 0; i < pss.size() && i < uss.size(); ++i) {
      job.pss.push_back({origin + pss[i].t, pss[i].bytes, uss[i].bytes, std::nullopt});
    }
  }
  if (detail::job_sums_cgroup(traces)) {
    Bytes high = 0;
    for (const MemSample& s : summed_series(traces, Metric::cgroup, align))
      job.cgroup.push_back(detail::job_charge(origin + s.t, s.bytes, high));
  }
  add_job_gpu(traces, align, origin, job);
  if (!job.gpu_devices.empty() &&
      !std::all_of(traces.begin(), traces.end(), [&](const Trace* t) { return has_metric(*t, Metric::gpu); })) {
    job.notes.push_back("GPU: some traces have no GPU series; the job's GPU figures miss them");
  }
  return job;
}

bool is_one_job(const std::vector<const Trace*>& traces) {
  if (traces.size() < 2) return false;
  const std::string& id = traces.front()->meta.job.job_id;
  return std::all_of(traces.begin(), traces.end(),
                     [&](const Trace* t) { return t->meta.job.rank.has_value() && t->meta.job.job_id == id; });
}

std::string rank_label(std::int64_t rank, const std::string& host) {
  return "rank " + std::to_string(rank) + (host.empty() ? "" : " (" + host + ")");
}

std::string given_or_rank_label(const std::string& label, std::optional<std::int64_t> rank, const std::string& host) {
  if (!label.empty()) return label;
  return rank ? rank_label(*rank, host) : std::string();
}

std::string rank_label(const Trace& trace) {
  if (trace.meta.job.rank) return rank_label(*trace.meta.job.rank, trace.meta.host);
  return default_label(trace.source);
}

}  // namespace qprof::analysis
