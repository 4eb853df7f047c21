#include "qprof/analysis/analysis.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <stdexcept>
#include <unordered_set>

#include "qprof/common/units.hpp"
#include "qprof/trace/format.hpp"
#include "series.hpp"

namespace qprof {

using namespace analysis_detail;

// ── Time ────────────────────────────────────────────────────────────────────────────────────

Seconds trace_end(const Trace& t) {
  Seconds end = t.t0();
  if (!t.mem.empty()) end = std::max(end, t.mem.back().t);
  if (!t.markers.empty()) end = std::max(end, t.markers.back().t);
  for (const Stage& s : t.stages) end = std::max(end, s.t_end);  // an mprof FUNC can end after the last sample
  if (t.exit) end = std::max(end, t.exit->t);
  return end;
}

Seconds trace_duration(const Trace& t) { return trace_end(t) - t.t0(); }

Seconds relative_time(const Trace& t, Seconds when) { return std::max(0.0, when - t.t0()); }

std::vector<const Stage*> stages_at(const Trace& t, Seconds when) {
  std::vector<const Stage*> out;
  for (const Stage& s : t.stages) {
    if (window_of(s).contains(when)) out.push_back(&s);
  }
  std::stable_sort(out.begin(), out.end(), [](const Stage* a, const Stage* b) { return a->t_start > b->t_start; });
  return out;
}

std::vector<const Stage*> stages_named(const Trace& t, std::string_view name) {
  std::vector<const Stage*> out;
  for (const Stage& s : t.stages) {
    if (s.name == name) out.push_back(&s);
  }
  return out;
}

std::vector<std::string> stage_names(const Trace& t) {
  // A set beside the list: a search of the list per stage was quadratic in distinct names.
  std::vector<std::string> out;
  std::unordered_set<std::string_view> seen;
  for (const Stage& s : t.stages) {
    if (seen.insert(s.name).second) out.push_back(s.name);
  }
  return out;
}

// ── Peaks ───────────────────────────────────────────────────────────────────────────────────

std::string peak_meaning(const Trace& trace, Metric m) {
  std::string what = m == Metric::hwm_sum && !peak_bracket(trace).upper ? "sum of each process's peak so far, not a bound"
                                                                        : std::string(metric_info(m).what);
  if (trace.unread_processes > 0) {
    what += "; INCOMPLETE: misses " + std::to_string(trace.unread_processes) + " process(es) qprof could not read";
  }
  return what;
}

std::optional<Peak> find_peak(const Trace& t, Metric m) {
  if (!has_metric(t, m)) return std::nullopt;
  const auto sampled = highest(metric_series(t, m));
  Peak p;
  if (sampled) p = Peak{sampled->bytes, sampled->t, false};
  switch (m) {
    case Metric::cgroup: {
      // The kernel's high-water mark is exact and at least every usage sample. Its time is that
      // of the first sample that saw it (it was reached since the sample before).
      Bytes kernel = peak_line(t, dat::kPeakCgroup).value_or(0);
      for (const CgroupSample& s : t.cgroup) kernel = std::max(kernel, s.peak);
      if (kernel >= p.bytes && kernel > 0) {
        std::optional<Seconds> when;
        if (sampled && sampled->bytes == kernel) when = sampled->t;
        for (const CgroupSample& s : t.cgroup) {
          if (!when && s.peak >= kernel) when = s.t;
        }
        p = Peak{kernel, when, true};
      }
      break;
    }
    case Metric::hwm_sum: {
      const auto line = peak_line(t, dat::kPeakHwmSum);
      const auto partial = peak_line(t, dat::kPeakHwmSumPartial);
      if (const auto end = line ? line : partial; end && *end > p.bytes) p = Peak{*end, std::nullopt, false};
      // A bound obeys the bracket (traces of older versions did not always).
      if (const auto b = peak_bracket(t); b.upper) p.bytes = std::max(p.bytes, *b.upper);
      break;
    }
    case Metric::kernel_process: p = Peak{*peak_line(t, dat::kPeakKernelProcess), std::nullopt, true}; break;
    default: break;
  }
  return p;
}

BracketInputs bracket_inputs(const Trace& t) {
  BracketInputs in;
  in.kernel_process = peak_line(t, dat::kPeakKernelProcess);
  in.hwm_sum = peak_line(t, dat::kPeakHwmSum);
  if (const auto s = highest(metric_series(t, Metric::rss))) in.sampled_rss = s->bytes;
  if (const auto s = highest(metric_series(t, Metric::pss))) in.sampled_pss = s->bytes;
  return in;
}

PeakBracket peak_bracket(const Trace& t) { return make_bracket(bracket_inputs(t)); }

std::optional<Peak> stage_peak(const Trace& t, Metric m, std::string_view name) {
  return peak_in_stages(metric_series(t, m), m, stages_named(t, name));
}

std::vector<ChildPeak> child_peaks(const Trace& t, const std::vector<TimeWindow>& windows) {
  std::vector<ChildPeak> out;
  for (const ChildSeries& c : t.children) {
    std::optional<Bytes> peak;
    for (const MemSample& s : c.samples) {
      if (!windows.empty() && !in_any(windows, s.t)) continue;
      peak = std::max(peak.value_or(0), s.bytes);
    }
    if (peak) out.push_back({c.pid, *peak});
  }
  return out;
}

// ── Stages ──────────────────────────────────────────────────────────────────────────────────

std::vector<StageStats> stage_stats(const Trace& t, Metric m) {
  if (!metric_info(m).windowed) {
    throw std::invalid_argument(std::string(metric_info(m).name) +
                                " has no samples over time, so it has no peak inside a stage");
  }
  const std::vector<MemSample> series = metric_series(t, m);
  const Seconds total = trace_duration(t);
  std::vector<StageStats> out;
  for (const Stage& s : t.stages) {
    StageStats st;
    st.stage = s;
    st.start = relative_time(t, s.t_start);
    st.end = relative_time(t, s.t_end);
    st.duration = std::max(0.0, s.t_end - s.t_start);
    st.share = total > 0 ? st.duration / total : 0.0;
    if (m == Metric::rss) {
      st.at_start = s.mem_start;
      st.at_end = s.mem_end;
    } else {
      st.at_start = value_at(series, s.t_start);
      st.at_end = value_at(series, s.t_end);
    }
    st.peak = peak_in_stages(series, m, {&s});
    out.push_back(std::move(st));
  }
  return out;
}

// ── Checkpoints ─────────────────────────────────────────────────────────────────────────────

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

std::optional<CpuUse> cpu_use(const Trace& t, Seconds min_interval) {
  if (t.cpu.empty()) return std::nullopt;
  CpuUse u;
  u.seconds = t.cpu.back().cpu_seconds;
  // Intervals shorter than the clock tick's resolution allows would show noise (a marker's
  // extra sample right after a regular one): they are merged into the next.
  const CpuSample* from = &t.cpu.front();
  for (const CpuSample& s : t.cpu) {
    if (s.t - from->t < min_interval) continue;
    u.peak_percent = std::max(u.peak_percent, 100.0 * (s.cpu_seconds - from->cpu_seconds) / (s.t - from->t));
    from = &s;
  }
  return u;
}

std::optional<CgroupSample> largest_cgroup_sample(const Trace& t) {
  const auto it = std::max_element(t.cgroup.begin(), t.cgroup.end(),
                                   [](const CgroupSample& a, const CgroupSample& b) { return a.usage < b.usage; });
  if (it == t.cgroup.end()) return std::nullopt;
  return *it;
}

}  // namespace qprof
