// SPDX-License-Identifier: Apache-2.0
// The streaming reduction of a trace into chart data: one trace::Visitor, one pass, no line kept.
#include "qprof/plot/reduce.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <unordered_map>

#include "qprof/trace/bracket.hpp"
#include "qprof/trace/completeness.hpp"
#include "qprof/trace/format.hpp"
#include "qprof/trace/stages.hpp"
#include "qprof/trace/threaded_reader.hpp"

namespace qprof::plot {
using trace::BracketInputs;
using trace::CgroupSample;
using trace::Completeness;
using trace::CpuSample;
using trace::DirSample;
using trace::ExitInfo;
using trace::GpuDevice;
using trace::GpuSample;
using trace::GpuUtilSample;
using trace::IoSample;
using trace::make_bracket;
using trace::MemKindsSample;
using trace::MemSample;
using trace::OomKill;
using trace::PssSample;
using trace::Stage;
using trace::stage_end_name;
using trace::stage_start_name;
using trace::StageTracker;
using trace::TasksSample;
using trace::TorchSample;
using trace::TraceMeta;
using trace::WatchedDir;

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}  // namespace

namespace {

class Reducer : public trace::Visitor {
 public:
  Reducer(TraceData& d, const ReduceOptions& o, const WarningSink& warn) : d_(d), opts_(o), warn_(warn) {
    if (o.t0) {
      d_.t0 = *o.t0;
      have_t0_ = true;
    }
  }

  void header(const TraceMeta& meta) override {
    d_.meta = meta;
    d_.qprof = true;
    watch_.header(meta);
    if (meta.start && !have_t0_) {
      d_.t0 = *meta.start;
      have_t0_ = true;
    }
  }
  // The last command, as every other reader keeps it; a second one is a run appended.
  void cmdline(std::string_view c) override {
    watch_.cmdline_at(line());
    d_.cmdline = std::string(c);
  }
  void mem(const MemSample& s) override {
    const double t = rel(s.t);
    watch_.mem(s.t, line());
    d_.t_begin = d_.samples == 0 ? t : std::min(d_.t_begin, t);
    ++d_.samples;
    d_.t_end = std::max(d_.t_end, t);
    d_.mem.add(t, static_cast<double>(s.bytes));
    rss_now_ = s.bytes;
    flush_root();
    mem_peak_ = std::max(mem_peak_, s.bytes);
    root_ = RootSample{s.t, t, static_cast<double>(s.bytes)};
  }
  void child(std::int64_t pid, const MemSample& s) override {
    const double t = rel(s.t);
    if (!opts_.children) return;
    // qprof's MEM is Σ RSS of every member and its CHLD lines are every member but the root,
    // written right after the MEM line of the same time: what is left is the root's own RSS.
    if (d_.qprof && root_ && root_->abs_t == s.t) root_->bytes -= static_cast<double>(s.bytes);
    saw_children_ = true;
    if (pid == d_.meta.root_pid) root_in_chld_ = true;  // a writer that lists the root too: no derived line
    auto [it, added] = child_index_.try_emplace(pid, d_.children.size());
    if (added && !keep_child(pid, s.bytes, it->second)) {
      it->second = kOther;
      ++d_.other_children_count;
    }
    if (it->second == kOther)
      d_.other_children.add(t, static_cast<double>(s.bytes));
    else
      d_.children[it->second].mem.add(t, static_cast<double>(s.bytes));
  }
  void process_name(std::int64_t pid, std::string_view name) override {
    if (!opts_.children) return;
    // A later PROC line of the same process: it exec'd after it joined; the latest name holds.
    if (auto it = names_.find(pid); it != names_.end())
      it->second = name;
    else if (names_.size() < kMaxNames)
      names_.emplace(pid, name);
  }
  void mark(Seconds t, std::string_view label) override {
    if (have_t0_) check_span(t);
    if (d_.markers.size() >= kMaxMarkers) {
      ++d_.markers_dropped;
    } else {
      d_.markers.push_back(PlotMarker{t, std::string(label), false});
    }
    if (auto stage = tracker_.on_marker(label, t, rss_now_)) marker_stages_.push_back(std::move(*stage));
  }
  void func(std::string_view name, const MemSample& start, const MemSample& end) override {
    if (have_t0_) check_span(start.t), check_span(end.t);
    funcs_.push_back(Stage{std::string(name), start.t, end.t, start.bytes, end.bytes, true, Stage::Source::func});
  }
  void pss(const PssSample& s) override {
    const double t = rel(s.t);
    d_.pss.add(t, static_cast<double>(s.pss));
    d_.uss.add(t, static_cast<double>(s.uss));
    if (s.unreclaimable) d_.pss_unreclaimable.add(t, static_cast<double>(*s.unreclaimable));
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
    const double t = rel(s.t);
    d_.cgroup.add(t, static_cast<double>(s.usage));
    if (const auto u = s.unreclaimable()) d_.cgroup_unreclaimable.add(t, static_cast<double>(*u));
    cgroup_peak_ = std::max({cgroup_peak_, s.peak, s.usage});
  }
  void gpu_device(const GpuDevice& dev) override {
    if (GpuDeviceData* g = device(dev.index)) g->info = dev;
  }
  void gpu(const GpuSample& s) override {
    const double t = rel(s.t);
    if (GpuDeviceData* g = device(s.device)) {
      g->tree.add(t, static_cast<double>(s.tree));
      g->used.add(t, static_cast<double>(s.used));
    }
    // The sum over devices is taken once per sampling round (lines with the same time).
    if (gpu_round_ && t != gpu_round_t_) flush_gpu_round();
    gpu_round_ = true;
    gpu_round_t_ = t;
    Bytes& held = gpu_tree_now_[s.device];
    gpu_tree_sum_ += s.tree - held;  // unsigned: the updates cancel exactly
    held = s.tree;
  }
  void torch(const TorchSample& s) override {
    TorchSample r = s;
    r.t = rel(s.t);
    d_.torch.push_back(r);  // one per checkpoint and device: as many as the markers, not the samples
  }
  void kinds(const MemKindsSample& s) override {
    const double t = rel(s.t);
    d_.anon.add(t, static_cast<double>(s.anon));
    d_.file.add(t, static_cast<double>(s.file));
    d_.shmem.add(t, static_cast<double>(s.shmem));
    d_.swap.add(t, static_cast<double>(s.swap));
    d_.stack_file.add(t, static_cast<double>(s.anon + s.file));
    d_.stack_shmem.add(t, static_cast<double>(s.rss()));
  }
  void tasks(const TasksSample& s) override {
    const double t = rel(s.t);
    d_.processes.add(t, static_cast<double>(s.processes));
    d_.threads.add(t, static_cast<double>(s.threads));
    d_.vsz.add(t, static_cast<double>(s.vsz));
  }
  void gpu_util(const GpuUtilSample& s) override {
    const double t = rel(s.t);
    auto it = std::find_if(d_.gpu_util.begin(), d_.gpu_util.end(),
                           [&](const GpuUtilData& g) { return g.device == s.device; });
    if (it == d_.gpu_util.end()) {
      if (d_.gpu_util.size() >= kMaxGpuUtilDevices) return;
      d_.gpu_util.push_back(GpuUtilData{s.device, Series(d_.grid, d_.window_from, d_.window_to),
                                        Series(d_.grid, d_.window_from, d_.window_to),
                                        Series(d_.grid, d_.window_from, d_.window_to)});
      it = d_.gpu_util.end() - 1;
    }
    it->busy.add(t, s.busy_percent);
    it->mem_bw.add(t, s.mem_bw_percent);
    if (s.tree_busy_percent) it->tree_busy.add(t, *s.tree_busy_percent);
  }
  void peak(std::string_view name, Bytes b) override { d_.peaks[std::string(name)] = b; }
  void dir_def(const WatchedDir& w) override {
    if (DirData* d = watched(w.index)) d->info = w;
  }
  void dir(const DirSample& s) override {
    const double t = rel(s.t);
    DirData* w = watched(s.dir);
    if (!w) return;
    w->apparent.add(t, static_cast<double>(s.apparent));
    w->fs_free.add(t, static_cast<double>(s.fs_free));
  }
  void oom_kill(const OomKill& k) override {  // a mark at the kill, named for its process
    if (have_t0_) check_span(k.t);
    const std::string who = k.pid > 0 ? std::to_string(k.pid) + " (" + k.name + ")" : k.name;
    if (d_.markers.size() < kMaxMarkers) d_.markers.push_back(PlotMarker{k.t, "OOM kill " + who, false});
  }
  void exit(const ExitInfo& e) override {
    if (have_t0_) check_span(e.t);
    d_.exit = e;  // its time is made relative in finish()
    watch_.exit();
  }
  // The reader's one warning, a cut last line: said with the rest of what is incomplete.
  void warning(const std::string&) override { watch_.cut_at(line()); }
  const Completeness& seen() const { return watch_.seen(); }

  void finish() {
    if (gpu_round_) flush_gpu_round();
    flush_root();
    if (!have_t0_) d_.t0 = 0;
    const double t0 = d_.t0;
    // Σ VmHWM is drawn as the upper bound only when the trace calls it one, raised to what must
    // lie below it (trace/bracket.hpp).
    if (hwm_max_ > 0 && !d_.peaks.count(std::string(trace::kPeakHwmSumPartial))) {
      d_.peaks.try_emplace(std::string(trace::kPeakHwmSum), hwm_max_);
    }
    if (auto h = d_.peaks.find(std::string(trace::kPeakHwmSum)); h != d_.peaks.end()) {
      BracketInputs in;
      in.hwm_sum = h->second;
      if (auto k = d_.peaks.find(std::string(trace::kPeakKernelProcess)); k != d_.peaks.end())
        in.kernel_process = k->second;
      if (mem_peak_ > 0) in.sampled_rss = mem_peak_;
      h->second = make_bracket(in).upper.value_or(h->second);
    }
    if (cgroup_peak_ > 0) d_.peaks.try_emplace(std::string(trace::kPeakCgroup), cgroup_peak_);
    if (d_.exit) d_.exit->t -= t0;

    std::vector<Stage> stages;
    if (d_.qprof) {
      // Stages come from the markers; the FUNC lines of a qprof trace only mirror them.
      const Seconds t_end = trace::open_stage_end(
          d_.t_end + t0, d_.markers.empty() ? std::nullopt : std::optional<Seconds>(d_.markers.back().t),
          d_.exit ? std::optional<Seconds>(d_.exit->t + t0) : std::nullopt);  // exit is relative by now
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
    check_span(t);
    return t - d_.t0;
  }

  // A time further than kMaxSpan from the start is a broken line, not a run: refused here, with
  // its FILE:LINE, before gnuplot sees a time axis it would loop over (MEM 3 1e16).
  void check_span(double t) const {
    if (std::fabs(t - d_.t0) <= kMaxSpan) return;
    char why[160];
    std::snprintf(why, sizeof why, "time %.17g is %.3g years %s the start of the trace (%.17g): too far to draw", t,
                  std::fabs(t - d_.t0) / kYear, t > d_.t0 ? "after" : "before", d_.t0);
    throw trace::BadRecord(why);
  }
  static constexpr double kYear = 365.25 * 86400;
  static constexpr std::size_t kMaxGpuUtilDevices = 64;  // a hostile trace cannot grow this without end

  static constexpr std::size_t kOther = static_cast<std::size_t>(-1);  // summarised, not a series of its own

  // A new process gets slot `slot` when there is room, or the slot of the kept process with the
  // lowest peak so far if it starts above that peak (that one joins the others); false: it
  // joins the others itself. Memory stays bounded by kMaxSeriesPerKind series per trace.
  bool keep_child(std::int64_t pid, Bytes first, std::size_t& slot) {
    if (d_.children.size() < kMaxSeriesPerKind) {
      d_.children.push_back(ChildData{pid, Series(d_.grid, d_.window_from, d_.window_to), {}});
      return true;
    }
    // A scan of 64 slots per process that does not fit: linear in the trace.
    std::size_t lowest = 0;
    for (std::size_t k = 1; k < d_.children.size(); ++k) {
      if (d_.children[k].mem.envelope().max().v < d_.children[lowest].mem.envelope().max().v) lowest = k;
    }
    ChildData& out = d_.children[lowest];
    if (!(static_cast<double>(first) > out.mem.envelope().max().v)) return false;
    for (const Point& p : out.mem.envelope().points()) d_.other_children.add(p.t, p.v);
    child_index_[out.pid] = kOther;
    ++d_.other_children_count;
    out = ChildData{pid, Series(d_.grid, d_.window_from, d_.window_to), {}};
    slot = lowest;
    return true;
  }

  // Null past kMaxSeriesPerKind directories (counted): a search per line made 100 000 quadratic.
  DirData* watched(int index) {
    const auto [it, added] = dir_index_.try_emplace(index, d_.dirs.size());
    if (added) {
      if (d_.dirs.size() >= kMaxSeriesPerKind) {
        it->second = kOther;
        ++d_.dirs_left_out;
      } else {
        d_.dirs.push_back(DirData{WatchedDir{index, ""}, Series(d_.grid, d_.window_from, d_.window_to),
                                  Series(d_.grid, d_.window_from, d_.window_to)});
      }
    }
    return it->second == kOther ? nullptr : &d_.dirs[it->second];
  }
  // Null past kMaxSeriesPerKind devices (counted; their figures still count in gpu_total).
  GpuDeviceData* device(int index) {
    auto [it, added] = gpu_index_.try_emplace(index, d_.gpus.size());
    if (added) {
      if (d_.gpus.size() >= kMaxSeriesPerKind) {
        it->second = kOther;
        ++d_.gpus_left_out;
        return nullptr;
      }
      GpuDevice info;
      info.index = index;
      d_.gpus.push_back(GpuDeviceData{info, Series(d_.grid, d_.window_from, d_.window_to),
                                      Series(d_.grid, d_.window_from, d_.window_to)});
    }
    return it->second == kOther ? nullptr : &d_.gpus[it->second];
  }

  void flush_gpu_round() { d_.gpu_total.add(gpu_round_t_, static_cast<double>(gpu_tree_sum_)); }

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
  Bytes mem_peak_ = 0;
  // The root's own RSS (MEM minus the CHLD lines of the same time), drawn with --children.
  struct RootSample {
    Seconds abs_t;
    double t;
    double bytes;
  };
  std::optional<RootSample> root_;
  bool saw_children_ = false;
  bool root_in_chld_ = false;
  static constexpr std::size_t kMaxNames = 1 << 16;  // a trace of many processes: names of the first
  std::unordered_map<std::int64_t, std::string> names_;
  std::unique_ptr<Series> root_series_;
  void flush_root() {
    if (!root_ || !opts_.children || !d_.qprof) return;
    if (!root_series_) root_series_ = std::make_unique<Series>(d_.grid, d_.window_from, d_.window_to);
    root_series_->add(root_->t, std::max(0.0, root_->bytes));
    root_.reset();
  }

 public:
  // After finish(): the root's line joins the children when the trace has per-process samples.
  void add_root_line() {
    for (ChildData& c : d_.children) {
      if (auto it = names_.find(c.pid); it != names_.end()) c.name = it->second;
    }
    if (!saw_children_ || root_in_chld_ || !root_series_) return;
    d_.children.insert(d_.children.begin(), ChildData{d_.meta.root_pid, std::move(*root_series_), {}});
    if (auto it = names_.find(d_.meta.root_pid); it != names_.end()) d_.children.front().name = it->second;
    d_.root_line = true;
  }

 private:
  StageTracker tracker_;
  std::vector<Stage> marker_stages_;
  std::vector<Stage> funcs_;
  std::unordered_map<std::int64_t, std::size_t> child_index_;
  std::unordered_map<int, std::size_t> gpu_index_;  // a slot of d_.gpus, or kOther
  std::unordered_map<int, std::size_t> dir_index_;  // a slot of d_.dirs, or kOther
  // Each device's latest tree figure and their sum, kept as lines come: a sum taken again per
  // round was quadratic in the number of devices.
  std::unordered_map<int, Bytes> gpu_tree_now_;
  Bytes gpu_tree_sum_ = 0;
  bool gpu_round_ = false;
  double gpu_round_t_ = 0;
  Bytes hwm_max_ = 0;
  Bytes cgroup_peak_ = 0;
  trace::CompletenessWatch watch_;  // what every reader says of a trace, plot says too
};

template <typename Parse>
Result<TraceData> reduce(const std::string& name, const ReduceOptions& options, const WarningSink& warn,
                         Parse&& parse) {
  TraceData d(options.columns, options.from.value_or(-kInf), options.to.value_or(kInf));
  d.path = name;
  Reducer r(d, options, warn);
  try {
    parse(r);
  } catch (const trace::ParseError& e) {  // the trace reader's boundary: FILE:LINE: reason
    return Failure{e.what()};
  }
  r.finish();
  r.add_root_line();
  if (d.samples == 0) return Failure{name + ": no memory samples (MEM lines): the trace is empty"};
  // What every reader says of a trace (cut short, runs appended, its clock); that it is cut short
  // may be left to the caller (warn_incomplete).
  if (warn) {
    const std::string cut = trace::incomplete_notice(name, r.seen());
    for (const std::string& n : trace::reading_notices(name, r.seen())) {
      if (options.warn_incomplete || n != cut) warn(n);
    }
  }
  return d;
}

}  // namespace

Result<TraceData> reduce_file(const std::string& path, const ReduceOptions& options, const WarningSink& warn) {
  // The parsing on a thread of its own, the reduction here: a long trace takes two cores.
  return reduce(path, options, warn, [&](trace::Visitor& v) { trace::parse_file_threaded(path, v); });
}

Result<TraceData> reduce_text(std::string_view text, const std::string& name, const ReduceOptions& options,
                              const WarningSink& warn) {
  return reduce(name, options, warn, [&](trace::Visitor& v) { trace::parse_text(text, name, v); });
}

}  // namespace qprof::plot
