#include "qprof/analysis/analysis.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <stdexcept>

#include "qprof/trace/format.hpp"
#include "qprof/common/units.hpp"

namespace qprof {
namespace {

const MetricInfo kMetrics[] = {
    {Metric::rss, "rss", "RSS", "RSS of the tree, sampled", true},
    {Metric::pss, "pss", "PSS", "PSS of the tree, sampled", true},
    {Metric::uss, "uss", "USS", "USS of the tree, sampled", true},
    {Metric::gpu, "gpu", "GPU", "GPU memory of the tree, sampled", true},
    {Metric::cgroup, "cgroup", "cgroup", "the tree's cgroup, the kernel's peak", true},
    {Metric::hwm_sum, "hwm_sum", "VmHWM sum", "sum of each process's peak, an upper bound", false},
    {Metric::kernel_process, "kernel_process", "kernel", "largest single process, the kernel's peak", false},
};

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
  const auto last = std::upper_bound(first, series.end(), w.to + kTimeSlack,
                                     [](Seconds v, const MemSample& s) { return v < s.t; });
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
std::optional<Peak> peak_in_stages(const std::vector<MemSample>& series, Metric m, const std::vector<const Stage*>& stages) {
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

double round_to(double v, double step) { return std::round(v / step) * step; }

std::vector<MemSample> series_as_written(const Trace& t, Metric m) {
  std::vector<MemSample> out;
  switch (m) {
    case Metric::rss: return t.mem;
    case Metric::pss:
    case Metric::uss:
      out.reserve(t.pss.size());
      for (const PssSample& s : t.pss) out.push_back({s.t, m == Metric::pss ? s.pss : s.uss});
      return out;
    case Metric::gpu: {
      // Devices are sampled together (one GPU line each, same time): one value per time, the
      // latest value of every device seen so far summed.
      std::map<int, Bytes> latest;
      for (std::size_t i = 0; i < t.gpu.size(); ++i) {
        latest[t.gpu[i].device] = t.gpu[i].tree;
        if (i + 1 < t.gpu.size() && t.gpu[i + 1].t == t.gpu[i].t) continue;
        Bytes sum = 0;
        for (const auto& [dev, b] : latest) sum += b;
        out.push_back({t.gpu[i].t, sum});
      }
      return out;
    }
    case Metric::cgroup:
      out.reserve(t.cgroup.size());
      for (const CgroupSample& s : t.cgroup) out.push_back({s.t, s.usage});
      return out;
    case Metric::hwm_sum: return t.hwm;
    case Metric::kernel_process: return out;
  }
  return out;
}

}  // namespace

// ── Metrics ─────────────────────────────────────────────────────────────────────────────────

const MetricInfo& metric_info(Metric m) {
  for (const MetricInfo& i : kMetrics) {
    if (i.metric == m) return i;
  }
  return kMetrics[0];
}

std::optional<Metric> parse_metric(std::string_view name) {
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
  switch (m) {
    case Metric::rss: return !t.mem.empty();
    case Metric::pss:
    case Metric::uss: return !t.pss.empty();
    case Metric::gpu: return !t.gpu.empty();
    case Metric::cgroup: return !t.cgroup.empty() || peak_line(t, dat::kPeakCgroup);
    case Metric::hwm_sum: return !t.hwm.empty() || peak_line(t, dat::kPeakHwmSum);
    case Metric::kernel_process: return peak_line(t, dat::kPeakKernelProcess).has_value();
  }
  return false;
}

std::vector<Metric> available_metrics(const Trace& t) {
  std::vector<Metric> out;
  for (Metric m : all_metrics()) {
    if (has_metric(t, m)) out.push_back(m);
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
  std::vector<std::string> out;
  for (const Stage& s : t.stages) {
    if (std::find(out.begin(), out.end(), s.name) == out.end()) out.push_back(s.name);
  }
  return out;
}

// ── Peaks ───────────────────────────────────────────────────────────────────────────────────

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
    case Metric::hwm_sum:
      if (const auto line = peak_line(t, dat::kPeakHwmSum); line && *line > p.bytes) p = Peak{*line, std::nullopt, false};
      break;
    case Metric::kernel_process: p = Peak{*peak_line(t, dat::kPeakKernelProcess), std::nullopt, true}; break;
    default: break;
  }
  return p;
}

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

std::vector<Checkpoint> checkpoints(const Trace& t, bool with_end) {
  std::vector<Checkpoint> out;
  if (t.mem.empty()) return out;
  const std::vector<MemSample> gpu = metric_series(t, Metric::gpu);
  auto snapshot = [&](bool first) {
    Snapshot s;
    s.rss = first ? t.mem.front().bytes : t.mem.back().bytes;
    if (!t.pss.empty()) {
      const PssSample& p = first ? t.pss.front() : t.pss.back();
      s.pss = p.pss;
      s.uss = p.uss;
    }
    if (!gpu.empty()) s.gpu_tree = first ? gpu.front().bytes : gpu.back().bytes;
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
  if (with_end) out.push_back({"End", t.mem.back().t, snapshot(false)});
  return out;
}

std::optional<IoSample> io_totals(const Trace& t) {
  if (t.io.empty()) return std::nullopt;
  return t.io.back();
}

// ── Budgets ─────────────────────────────────────────────────────────────────────────────────

Bytes Growth::limit_over(Bytes baseline) const {
  if (fraction) return static_cast<Bytes>(std::floor(static_cast<double>(baseline) * (1.0 + *fraction)));
  return baseline + bytes.value_or(0);
}

std::string Growth::text() const {
  if (fraction) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g%%", round_to(*fraction * 100.0, 1e-6));
    return buf;
  }
  return human_bytes(bytes.value_or(0));
}

std::optional<Growth> parse_growth(std::string_view text) {
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  if (!text.empty() && text.back() == '%') {
    text.remove_suffix(1);
    double pct = 0;
    const auto r = std::from_chars(text.data(), text.data() + text.size(), pct);
    if (r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(pct) || pct < 0) {
      return std::nullopt;
    }
    return Growth{pct / 100.0, std::nullopt};
  }
  const auto b = parse_size(text);
  if (!b) return std::nullopt;
  return Growth{std::nullopt, *b};
}

std::optional<BudgetCheck> check_budget(const Trace& t, Metric m, Bytes limit) {
  const auto peak = find_peak(t, m);
  if (!peak) return std::nullopt;
  BudgetCheck c{m, limit, *peak, {}};
  if (peak->t) {
    for (const Stage* s : stages_at(t, *peak->t)) c.stages.push_back(s->name);
  }
  return c;
}

std::string where_in_stages(const std::vector<std::string>& stages, bool time_known) {
  if (!time_known) return "";
  if (stages.empty()) return "outside any stage";
  std::string out = "in stage '" + stages.front() + "'";
  for (std::size_t i = 1; i < stages.size(); ++i) out += (i == 1 ? " (inside '" : ", '") + stages[i] + "'";
  if (stages.size() > 1) out += ")";
  return out;
}

// ── Comparison ──────────────────────────────────────────────────────────────────────────────

std::optional<Spread> spread_of(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  const double median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
  return Spread{median, v.front(), v.back()};
}

Comparison compare(const std::vector<CompareEntry>& entries, Metric metric, bool stages) {
  Comparison c;
  c.metric = metric;
  using Kind = CompareColumn::Kind;
  // What one run gives for a column; nullopt where the trace does not have it.
  using Extract = std::function<std::optional<double>(const Trace&)>;
  std::vector<Extract> extract;
  auto add = [&](CompareColumn col, Extract e) {
    c.columns.push_back(std::move(col));
    extract.push_back(std::move(e));
  };
  auto any_run = [&](auto pred) {
    for (const CompareEntry& e : entries) {
      for (const Trace* t : e.runs) {
        if (pred(*t)) return true;
      }
    }
    return false;
  };

  add({"duration", "duration", Kind::seconds, std::nullopt, ""},
      [](const Trace& t) -> std::optional<double> { return trace_duration(t); });
  for (Metric m : all_metrics()) {
    if (m != Metric::rss && !any_run([m](const Trace& t) { return has_metric(t, m); })) continue;
    add({"peak_" + std::string(metric_info(m).name), "peak " + std::string(metric_info(m).title), Kind::bytes, m, ""},
        [m](const Trace& t) -> std::optional<double> {
          const auto p = find_peak(t, m);
          if (!p) return std::nullopt;
          return static_cast<double>(p->bytes);
        });
  }
  if (any_run([](const Trace& t) { return !t.io.empty(); })) {
    add({"disk_read", "disk read", Kind::bytes, std::nullopt, ""}, [](const Trace& t) -> std::optional<double> {
      if (t.io.empty()) return std::nullopt;
      return static_cast<double>(t.io.back().read_bytes);
    });
    add({"disk_write", "disk write", Kind::bytes, std::nullopt, ""}, [](const Trace& t) -> std::optional<double> {
      if (t.io.empty()) return std::nullopt;
      return static_cast<double>(t.io.back().write_bytes);
    });
  }
  if (stages && metric_info(metric).windowed) {
    std::vector<std::string> names;
    for (const CompareEntry& e : entries) {
      for (const Trace* t : e.runs) {
        for (std::string& n : stage_names(*t)) {
          if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(std::move(n));
        }
      }
    }
    for (const std::string& name : names) {
      add({"stage_peak", "peak in " + name, Kind::bytes, metric, name},
          [metric, name](const Trace& t) -> std::optional<double> {
            const auto p = stage_peak(t, metric, name);
            if (!p) return std::nullopt;
            return static_cast<double>(p->bytes);
          });
    }
  }

  for (const CompareEntry& e : entries) {
    std::vector<CompareValue> row;
    for (const Extract& x : extract) {
      std::vector<double> values;
      for (const Trace* t : e.runs) {
        if (const auto v = x(*t)) values.push_back(*v);
      }
      row.push_back({spread_of(std::move(values)), false, std::nullopt});
    }
    c.rows.push_back(std::move(row));
  }
  for (std::size_t col = 0; col < c.columns.size(); ++col) {
    std::optional<double> lowest;
    std::size_t with_value = 0;
    for (const auto& row : c.rows) {
      if (!row[col].value) continue;
      ++with_value;
      lowest = std::min(lowest.value_or(row[col].value->median), row[col].value->median);
    }
    const std::optional<Spread> first = c.rows.empty() ? std::nullopt : c.rows.front()[col].value;
    for (auto& row : c.rows) {
      CompareValue& v = row[col];
      if (!v.value) continue;
      v.lowest = with_value >= 2 && v.value->median == *lowest;
      if (first && first->median > 0) v.ratio = v.value->median / first->median;
    }
  }
  return c;
}

std::optional<std::size_t> peak_column(const Comparison& c, Metric m) {
  for (std::size_t i = 0; i < c.columns.size(); ++i) {
    if (c.columns[i].metric == m && c.columns[i].stage.empty()) return i;
  }
  return std::nullopt;
}

std::vector<RowCheck> check_rows(const Comparison& c, std::optional<Bytes> max_peak, std::optional<Growth> growth,
                                 bool first_is_baseline) {
  std::vector<RowCheck> out(c.rows.size());
  const auto col = peak_column(c, c.metric);
  auto value_of = [&](std::size_t row) -> std::optional<Bytes> {
    if (!col || !c.rows[row][*col].value) return std::nullopt;
    return static_cast<Bytes>(std::llround(c.rows[row][*col].value->median));
  };
  const std::optional<Bytes> base = c.rows.empty() ? std::nullopt : value_of(0);
  for (std::size_t r = 0; r < c.rows.size(); ++r) {
    RowCheck& rc = out[r];
    const bool check_peak = max_peak && !(r == 0 && first_is_baseline);
    const bool check_growth = growth && r > 0;
    rc.checked = check_peak || check_growth;
    const auto value = value_of(r);
    rc.known = rc.checked && value && (!check_growth || base);
    if (!rc.known) continue;
    rc.value = *value;
    if (check_peak && *value > *max_peak) rc.over_max_peak = *value - *max_peak;
    if (check_growth) {
      rc.baseline = *base;
      rc.growth = *base ? static_cast<double>(*value) / static_cast<double>(*base) - 1.0 : 0.0;
      const Bytes limit = growth->limit_over(*base);
      if (*value > limit) rc.over_growth = *value - limit;
    }
  }
  return out;
}

}  // namespace qprof
