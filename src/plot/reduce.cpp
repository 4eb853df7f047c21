// The streaming reduction of a trace into chart data: one dat::Visitor, one pass, no line kept.
#include "qprof/plot/reduce.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "qprof/trace/format.hpp"
#include "qprof/record/markers.hpp"

namespace qprof::plot {

Series::Series(std::shared_ptr<EnvelopeGrid> grid, double from, double to)
    : env_(std::move(grid)), from_(from), to_(to) {}

void Series::add(double t, double v) {
  if (t < from_) {
    if (!before_ || t >= before_->t) before_ = Point{t, v};
  } else if (t > to_) {
    if (!after_ || t < after_->t) after_ = Point{t, v};
  } else {
    env_.add(t, v);
  }
}

std::vector<Point> Series::points() const {
  std::vector<Point> out;
  if (before_) out.push_back(*before_);
  const std::vector<Point> inner = env_.points();
  out.insert(out.end(), inner.begin(), inner.end());
  if (after_) out.push_back(*after_);
  return out;
}

std::vector<Point> Series::last_points() const {
  std::vector<Point> out;
  if (before_) out.push_back(*before_);
  const std::vector<Point> inner = env_.last_points();
  out.insert(out.end(), inner.begin(), inner.end());
  if (after_) out.push_back(*after_);
  return out;
}

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

TraceData::TraceData(std::size_t columns, double from, double to)
    : TraceData(std::make_shared<EnvelopeGrid>(columns), from, to) {}

TraceData::TraceData(std::shared_ptr<EnvelopeGrid> grid, double from, double to)
    : grid(grid),
      window_from(from),
      window_to(to),
      mem(grid, from, to),
      pss(grid, from, to),
      uss(grid, from, to),
      cgroup(grid, from, to),
      gpu_total(grid, from, to),
      cpu(grid, from, to),
      io_read(grid, from, to),
      io_write(grid, from, to) {}

namespace {

class Reducer : public dat::Visitor {
 public:
  Reducer(TraceData& d, const ReduceOptions& o, const WarningSink& warn) : d_(d), opts_(o), warn_(warn) {}

  void header(const TraceMeta& meta) override {
    d_.meta = meta;
    d_.qprof = true;
    if (meta.start && !have_t0_) {
      d_.t0 = *meta.start;
      have_t0_ = true;
    }
  }
  void cmdline(std::string_view c) override {
    if (d_.cmdline.empty()) d_.cmdline = std::string(c);
  }
  void mem(const MemSample& s) override {
    const double t = rel(s.t);
    ++d_.samples;
    d_.t_end = std::max(d_.t_end, t);
    d_.mem.add(t, static_cast<double>(s.bytes));
    rss_now_ = s.bytes;
  }
  void child(std::int64_t pid, const MemSample& s) override {
    const double t = rel(s.t);
    if (!opts_.children) return;
    auto [it, added] = child_index_.try_emplace(pid, d_.children.size());
    if (added) d_.children.push_back(ChildData{pid, Series(d_.grid, d_.window_from, d_.window_to)});
    d_.children[it->second].mem.add(t, static_cast<double>(s.bytes));
  }
  void mark(Seconds t, std::string_view label) override {
    if (d_.markers.size() >= kMaxMarkers) {
      ++d_.markers_dropped;
    } else {
      d_.markers.push_back(PlotMarker{t, std::string(label), false});
    }
    if (auto stage = tracker_.on_marker(label, t, rss_now_)) marker_stages_.push_back(std::move(*stage));
  }
  void func(std::string_view name, const MemSample& start, const MemSample& end) override {
    funcs_.push_back(Stage{std::string(name), start.t, end.t, start.bytes, end.bytes, true, Stage::Source::func});
  }
  void pss(const PssSample& s) override {
    const double t = rel(s.t);
    d_.pss.add(t, static_cast<double>(s.pss));
    d_.uss.add(t, static_cast<double>(s.uss));
  }
  void io(const IoSample& s) override {
    const double t = rel(s.t);
    d_.io_read.add(t, static_cast<double>(s.read_bytes));
    d_.io_write.add(t, static_cast<double>(s.write_bytes));
  }
  void cpu(const CpuSample& s) override { d_.cpu.add(rel(s.t), s.cpu_seconds); }
  void hwm(const MemSample& s) override {
    rel(s.t);
    hwm_max_ = std::max(hwm_max_, s.bytes);
  }
  void cgroup(const CgroupSample& s) override {
    d_.cgroup.add(rel(s.t), static_cast<double>(s.usage));
    cgroup_peak_ = std::max({cgroup_peak_, s.peak, s.usage});
  }
  void gpu_device(const GpuDevice& dev) override { device(dev.index).info = dev; }
  void gpu(const GpuSample& s) override {
    const double t = rel(s.t);
    GpuDeviceData& g = device(s.device);
    g.tree.add(t, static_cast<double>(s.tree));
    g.used.add(t, static_cast<double>(s.used));
    // The sum over devices is taken once per sampling round (lines with the same time).
    if (gpu_round_ && t != gpu_round_t_) flush_gpu_round();
    gpu_round_ = true;
    gpu_round_t_ = t;
    gpu_tree_now_[s.device] = s.tree;
  }
  void peak(std::string_view name, Bytes b) override { d_.peaks[std::string(name)] = b; }
  void exit(const ExitInfo& e) override {
    d_.exit = e;  // its time is made relative in finish()
  }
  void warning(const std::string& w) override {
    if (warn_) warn_(w);
  }

  void finish() {
    if (gpu_round_) flush_gpu_round();
    if (!have_t0_) d_.t0 = 0;
    const double t0 = d_.t0;
    if (hwm_max_ > 0) d_.peaks.try_emplace(std::string(dat::kPeakHwmSum), hwm_max_);
    if (cgroup_peak_ > 0) d_.peaks.try_emplace(std::string(dat::kPeakCgroup), cgroup_peak_);
    if (d_.exit) d_.exit->t -= t0;

    std::vector<Stage> stages;
    if (d_.qprof) {
      // Stages come from the markers; the FUNC lines of a qprof trace only mirror them.
      Seconds t_end = d_.t_end + t0;
      if (!d_.markers.empty()) t_end = std::max(t_end, d_.markers.back().t);
      stages = std::move(marker_stages_);
      for (Stage& s : tracker_.unclosed(t_end, rss_now_)) stages.push_back(std::move(s));
      for (const Stage& s : stages) mark_edges(s);
    } else {
      stages = std::move(funcs_);
    }
    for (Stage& s : stages) {
      s.t_start -= t0;
      s.t_end -= t0;
    }
    std::stable_sort(stages.begin(), stages.end(),
                     [](const Stage& a, const Stage& b) { return a.t_start < b.t_start; });
    d_.stages = std::move(stages);
    for (PlotMarker& m : d_.markers) m.t -= t0;
  }

 private:
  // Seconds from the start; the first sample fixes the start of a trace without a header.
  double rel(double t) {
    if (!have_t0_) {
      d_.t0 = t;
      have_t0_ = true;
    }
    return t - d_.t0;
  }

  GpuDeviceData& device(int index) {
    auto [it, added] = gpu_index_.try_emplace(index, d_.gpus.size());
    if (added) {
      GpuDevice info;
      info.index = index;
      d_.gpus.push_back(GpuDeviceData{info, Series(d_.grid, d_.window_from, d_.window_to),
                                      Series(d_.grid, d_.window_from, d_.window_to)});
    }
    return d_.gpus[it->second];
  }

  void flush_gpu_round() {
    Bytes sum = 0;
    for (const auto& [dev, b] : gpu_tree_now_) sum += b;
    d_.gpu_total.add(gpu_round_t_, static_cast<double>(sum));
  }

  // Marks the markers that opened and closed a marker stage.
  void mark_edges(const Stage& s) {
    bool start_done = false, end_done = !s.closed;
    for (PlotMarker& m : d_.markers) {
      if (!start_done && m.t == s.t_start && !m.stage_edge) {
        if (auto name = stage_start_name(m.label); name && *name == s.name) {
          m.stage_edge = start_done = true;
          continue;
        }
      }
      if (!end_done && m.t == s.t_end && !m.stage_edge) {
        if (auto name = stage_end_name(m.label); name && *name == s.name) m.stage_edge = end_done = true;
      }
    }
  }

  TraceData& d_;
  const ReduceOptions& opts_;
  const WarningSink& warn_;
  bool have_t0_ = false;
  Bytes rss_now_ = 0;
  StageTracker tracker_;
  std::vector<Stage> marker_stages_;
  std::vector<Stage> funcs_;
  std::unordered_map<std::int64_t, std::size_t> child_index_;
  std::unordered_map<int, std::size_t> gpu_index_;
  std::map<int, Bytes> gpu_tree_now_;
  bool gpu_round_ = false;
  double gpu_round_t_ = 0;
  Bytes hwm_max_ = 0;
  Bytes cgroup_peak_ = 0;
};

template <typename Parse>
TraceData reduce(const std::string& name, const ReduceOptions& options, const WarningSink& warn, Parse&& parse) {
  TraceData d(options.columns, options.from.value_or(-kInf), options.to.value_or(kInf));
  d.path = name;
  Reducer r(d, options, warn);
  parse(r);
  r.finish();
  if (d.samples == 0) throw dat::ParseError(name, 0, "no memory samples (MEM lines): the trace is empty");
  return d;
}

}  // namespace

TraceData reduce_file(const std::string& path, const ReduceOptions& options, const WarningSink& warn) {
  return reduce(path, options, warn, [&](dat::Visitor& v) { dat::parse_file(path, v); });
}

TraceData reduce_text(std::string_view text, const std::string& name, const ReduceOptions& options,
                      const WarningSink& warn) {
  return reduce(name, options, warn, [&](dat::Visitor& v) { dat::parse_text(text, name, v); });
}

}  // namespace qprof::plot
