// SPDX-License-Identifier: Apache-2.0
// read_trace_reduced: a regular file read twice, in memory flat in its length. The first pass
// finds the stages; the second keeps of each sampled series the records their figures are read
// from (series_keeper.hpp), over the run and inside each stage. Small records (header, markers,
// stages, notes, OOM kills, PEAK lines, CGPEAK windows, exit) are kept whole, as read_trace keeps
// them.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>

#include "series_keeper.hpp"
#include "trace_builder.hpp"

namespace qprof::trace {
namespace {
using detail::KeepPlan;
using detail::SeriesKeeper;
using detail::TraceBuilder;

// One time's GPU lines: the sum the GPU metric reads (every device's latest), kept as a whole
// snapshot so that the sum read back is the one recorded.
struct GpuGroup {
  Seconds t = 0;
  std::vector<GpuSample> lines;
};

constexpr Bytes present(const std::optional<Bytes>& v) { return v ? *v + 1 : 0; }

class WindowReducer : public TraceBuilder {
 public:
  WindowReducer(Trace& trace, const KeepPlan& plan, std::vector<std::string>* warnings)
      : TraceBuilder(trace, warnings),
        plan_(plan),
        mem_(plan),
        hwm_(plan),
        pss_(plan),
        cgroup_(plan),
        kinds_(plan),
        tasks_(plan),
        gpu_(plan) {}

  void mem(const MemSample& s) override {
    TraceBuilder::mem(s);
    // The latest sample above 0 too: the end of the run's checkpoints reads it.
    mem_.add(s, {s.bytes, s.bytes > 0 ? mem_.count() + 1 : 0});
    latest_only(tr_.mem);
  }
  void child(std::int64_t pid, const MemSample& s) override {
    // No figure of a report or a comparison is a child's inside a stage: first, last, highest.
    auto [it, added] = children_.try_emplace(pid, no_windows_);
    if (added) order_.push_back(pid);
    it->second.add(s, {s.bytes});
  }
  void hwm(const MemSample& s) override {
    TraceBuilder::hwm(s);
    hwm_.add(s, {s.bytes});
    latest_only(tr_.hwm);
  }
  void pss(const PssSample& s) override {
    TraceBuilder::pss(s);
    pss_.add(s, {s.pss, s.uss, present(s.unreclaimable)});
    latest_only(tr_.pss);
  }
  void cgroup(const CgroupSample& s) override {
    TraceBuilder::cgroup(s);
    // The usage of the largest reading with its parts too (the footprint's split, largest_cgroup_sample).
    cgroup_.add(s, {s.usage, s.peak, present(s.unreclaimable()), present(s.file), s.anon ? s.usage + 1 : 0,
                    s.file ? s.usage + 1 : 0});
    latest_only(tr_.cgroup);
  }
  void kinds(const MemKindsSample& s) override {
    TraceBuilder::kinds(s);
    kinds_.add(s, {s.anon, s.file, s.shmem, s.swap, s.rss()});
    latest_only(tr_.kinds);
  }
  void tasks(const TasksSample& s) override {
    TraceBuilder::tasks(s);
    tasks_.add(s, {s.processes, s.threads, s.vsz});
    latest_only(tr_.tasks);
  }
  void dir(const DirSample& s) override {
    TraceBuilder::dir(s);
    tr_.dir_samples.pop_back();
    auto it = dirs_.try_emplace(s.dir, plan_).first;
    it->second.add(s, {s.apparent, s.allocated, ~s.fs_free});  // the least free space too
  }
  void gpu(const GpuSample& s) override {
    if (group_ && group_->t != s.t) close_gpu_group();
    if (!group_) group_ = GpuGroup{s.t, {}};
    TraceBuilder::gpu(s);
    latest_only(tr_.gpu);
    gpu_now_[s.device] = s;
  }
  // Figures read at the start and the end of the run only here (their scans are report's own).
  void io(const IoSample& s) override {
    ends(tr_.io, s, [&] { TraceBuilder::io(s); });
  }
  void cpu(const CpuSample& s) override {
    ends(tr_.cpu, s, [&] { TraceBuilder::cpu(s); });
  }
  void torch(const TorchSample& s) override {
    ends(tr_.torch, s, [&] { TraceBuilder::torch(s); });
  }
  void gpu_util(const GpuUtilSample& s) override {
    ends(tr_.gpu_util, s, [&] { TraceBuilder::gpu_util(s); });
  }

  std::uint64_t mem_samples() const { return mem_.count(); }
  std::map<int, std::uint64_t> dir_samples() const {
    std::map<int, std::uint64_t> out;
    for (const auto& [index, d] : dirs_) out[index] = d.count();
    return out;
  }
  // A trace the reduction cannot serve: records out of time order (a window could miss some), or
  // GPU devices too many to snapshot at every time.
  bool needs_whole() const {
    bool any = many_devices_ || scans_unsorted_ || mem_.unsorted() || hwm_.unsorted() || pss_.unsorted() ||
               cgroup_.unsorted() || kinds_.unsorted() || tasks_.unsorted() || gpu_.unsorted();
    for (const auto& [index, d] : dirs_) any = any || d.unsorted();
    return any;
  }

  void finish() {
    close_gpu_group();
    tr_.mem = mem_.kept();
    tr_.hwm = hwm_.kept();
    tr_.pss = pss_.kept();
    tr_.cgroup = cgroup_.kept();
    tr_.kinds = kinds_.kept();
    tr_.tasks = tasks_.kept();
    tr_.gpu.clear();
    for (const GpuGroup& g : gpu_.kept()) tr_.gpu.insert(tr_.gpu.end(), g.lines.begin(), g.lines.end());
    for (std::int64_t pid : order_) tr_.children.push_back(ChildSeries{pid, children_.at(pid).kept()});
    for (const auto& [index, d] : dirs_) {
      const auto kept = d.kept();
      tr_.dir_samples.insert(tr_.dir_samples.end(), kept.begin(), kept.end());
    }
    std::stable_sort(tr_.dir_samples.begin(), tr_.dir_samples.end(),
                     [](const DirSample& a, const DirSample& b) { return a.t < b.t; });
    TraceBuilder::finish();
  }

 private:
  template <typename S>
  static void latest_only(std::vector<S>& v) {
    if (v.size() > 1) v.erase(v.begin(), v.end() - 1);
  }
  // The first record and the latest.
  template <typename S, typename Add>
  void ends(std::vector<S>& v, const S& s, Add add) {
    if (!v.empty() && s.t < v.back().t) scans_unsorted_ = true;
    add();
    if (v.size() > 2) v.erase(v.begin() + 1, v.end() - 1);
  }

  void close_gpu_group() {
    if (!group_) return;
    if (gpu_now_.size() > kMaxSnapshotDevices) {  // a snapshot per time would be quadratic: read it whole
      many_devices_ = true;
      group_.reset();
      return;
    }
    Bytes sum = 0;
    for (const auto& [device, line] : gpu_now_) {
      GpuSample g = line;
      g.t = group_->t;
      sum += g.tree;
      group_->lines.push_back(g);
    }
    gpu_.add(*group_, {sum});
    group_.reset();
  }

  static constexpr std::size_t kMaxSnapshotDevices = 64;
  bool many_devices_ = false;
  const KeepPlan& plan_;
  KeepPlan no_windows_;
  SeriesKeeper<MemSample, 2> mem_;
  SeriesKeeper<MemSample, 1> hwm_;
  bool scans_unsorted_ = false;  // I/O, CPU or GPU use: their scans need time order
  SeriesKeeper<PssSample, 3> pss_;
  SeriesKeeper<CgroupSample, 6> cgroup_;
  SeriesKeeper<MemKindsSample, 5> kinds_;
  SeriesKeeper<TasksSample, 3> tasks_;
  SeriesKeeper<GpuGroup, 1> gpu_;
  std::map<int, SeriesKeeper<DirSample, 3>> dirs_;
  std::unordered_map<std::int64_t, SeriesKeeper<MemSample, 1>> children_;
  std::vector<std::int64_t> order_;   // children in the order they first appear
  std::map<int, GpuSample> gpu_now_;  // each device's latest line, by index
  std::optional<GpuGroup> group_;     // the time being read
};

// The stages' windows and their ends, as the analysis reads them (analysis/timeline.hpp).
KeepPlan plan_of(const std::vector<Stage>& stages, Seconds slack) {
  KeepPlan plan;
  for (const Stage& s : stages) {
    plan.windows.push_back({s.t_start - slack, s.t_end + slack});
    plan.points.push_back(s.t_start + slack);
    plan.points.push_back(s.t_end + slack);
  }
  std::sort(plan.windows.begin(), plan.windows.end(),
            [](const KeepPlan::Window& a, const KeepPlan::Window& b) { return a.lo < b.lo; });
  std::sort(plan.points.begin(), plan.points.end());
  plan.points.erase(std::unique(plan.points.begin(), plan.points.end()), plan.points.end());
  return plan;
}

// One pass over an open file, from its start.
template <typename Reader>
void read_pass(int fd, const std::string& name, std::uint64_t length, Reader& reader) {
  if (::lseek(fd, 0, SEEK_SET) != 0) throw ParseError(name, 0, std::strerror(errno));
  if (length > 0) parse_fd(fd, name, reader, kMaxLineBytes, 0, length);
  reader.finish();
}

}  // namespace

std::optional<Trace> read_trace_reduced(const std::string& path, Seconds slack, std::vector<std::string>* warnings) {
  // Looked at before it is opened: opening a FIFO takes its writer.
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;  // read once, whole
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw ParseError(path, 0, std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  // Every pass reads as far as the first: a trace still being written grows meanwhile.
  const std::uint64_t length = ::fstat(fd, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
  Trace first;
  first.source = path;
  const KeepPlan none;
  WindowReducer stages(first, none, nullptr);
  read_pass(fd, path, length, stages);
  detail::require_samples(first);
  if (stages.needs_whole()) return std::nullopt;
  Trace tr;
  tr.source = path;
  const KeepPlan plan = plan_of(first.stages, slack);
  WindowReducer reducer(tr, plan, warnings);
  read_pass(fd, path, length, reducer);
  if (reducer.needs_whole()) return std::nullopt;
  tr.reduced = Trace::Reduced{reducer.mem_samples(), length, reducer.dir_samples(), path};
  return tr;
}

}  // namespace qprof::trace
