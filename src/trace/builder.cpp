// SPDX-License-Identifier: Apache-2.0
// Builds a whole Trace from the streamed records: markers get the snapshot of every series at
// their place in the file, and stages are paired from markers (qprof) or taken from FUNC (mprof).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <set>
#include <unordered_map>

#include "qprof/trace/format.hpp"
#include "qprof/trace/stages.hpp"
#include "trace_builder.hpp"

namespace qprof::trace {

Seconds Trace::t0() const {
  // What a streaming reader knows when it needs it (plot reduces as it reads): the header, or
  // else the first memory sample. An mprof FUNC bracket may then start a little before 0.
  if (meta.start) return *meta.start;
  return mem.empty() ? 0.0 : mem.front().t;
}

namespace {
using detail::TraceBuilder;

// A TraceBuilder that keeps, of each sampled series, only what the series' peaks need: its first
// record (the trace's start), its last (what a marker's snapshot reads), and per value the
// highest record, the earliest of equal ones — inside `windows` when there are any. Memory stays
// flat in the trace's length (kCompactAt records a series at most, markers and stages aside).
class PeakReducer : public TraceBuilder {
 public:
  PeakReducer(Trace& trace, const std::vector<std::pair<Seconds, Seconds>>& windows, std::string stage)
      : TraceBuilder(trace, nullptr), windows_(windows), stage_(std::move(stage)) {}

  // A marker's own record serves no peak: the latest alone is kept (the end of the trace reads
  // it). Its stages are kept while they may hold a peak (prune_stages), so that an endless
  // stream of markers costs no more memory than an endless stream of samples.
  void mark(Seconds t, std::string_view label) override {
    TraceBuilder::mark(t, label);
    if (tr_.markers.size() > 1) tr_.markers.erase(tr_.markers.begin(), tr_.markers.end() - 1);
    if (tr_.stages.size() >= stages_compact_at_) prune_stages();
  }
  void note(std::string_view text) override {
    if (tr_.notes.size() < kMaxNotes) TraceBuilder::note(text);
  }
  void oom_kill(const OomKill& k) override {
    if (tr_.oom_kills.size() < kMaxNotes) TraceBuilder::oom_kill(k);
  }

  void mem(const MemSample& s) override {
    TraceBuilder::mem(s);
    compact(tr_.mem, [](const MemSample& m) { return std::array<Bytes, 1>{m.bytes}; });
  }
  void child(std::int64_t pid, const MemSample& s) override {
    TraceBuilder::child(pid, s);
    compact(tr_.children[child_index_.at(pid)].samples,
            [](const MemSample& m) { return std::array<Bytes, 1>{m.bytes}; });
  }
  void hwm(const MemSample& s) override {
    TraceBuilder::hwm(s);
    compact(tr_.hwm, [](const MemSample& m) { return std::array<Bytes, 1>{m.bytes}; });
  }
  void pss(const PssSample& s) override {
    TraceBuilder::pss(s);
    // A present figure of 0 still outranks an absent one: has_metric asks whether any is there.
    compact(tr_.pss, [](const PssSample& p) {
      return std::array<Bytes, 3>{p.pss, p.uss, p.unreclaimable ? *p.unreclaimable + 1 : 0};
    });
  }
  void cgroup(const CgroupSample& s) override {
    TraceBuilder::cgroup(s);
    compact(tr_.cgroup, [](const CgroupSample& c) {
      const auto unreclaimable = c.unreclaimable();
      return std::array<Bytes, 4>{c.usage, c.peak, unreclaimable ? *unreclaimable + 1 : 0, c.file ? *c.file + 1 : 0};
    });
  }
  void kinds(const MemKindsSample& s) override {
    TraceBuilder::kinds(s);
    compact(tr_.kinds, [](const MemKindsSample& k) {
      return std::array<Bytes, 5>{k.anon, k.file, k.shmem, k.swap, k.rss()};
    });
  }
  void dir(const DirSample& s) override {
    TraceBuilder::dir(s);
    // Per directory: its own first, last and highest records.
    auto& mine = dirs_[s.dir];
    mine.push_back(s);
    tr_.dir_samples.pop_back();
    compact(mine, [](const DirSample& d) { return std::array<Bytes, 2>{d.apparent, d.allocated}; });
  }
  void gpu(const GpuSample& s) override;
  // Figures no peak is taken of: the latest alone.
  void io(const IoSample& s) override {
    latest_only(tr_.io, [&] { TraceBuilder::io(s); });
  }
  void cpu(const CpuSample& s) override {
    latest_only(tr_.cpu, [&] { TraceBuilder::cpu(s); });
  }
  void torch(const TorchSample& s) override {
    latest_only(tr_.torch, [&] { TraceBuilder::torch(s); });
  }
  void tasks(const TasksSample& s) override {
    latest_only(tr_.tasks, [&] { TraceBuilder::tasks(s); });
  }
  void gpu_util(const GpuUtilSample& s) override {
    latest_only(tr_.gpu_util, [&] { TraceBuilder::gpu_util(s); });
  }

  void finish() {
    close_gpu_group();
    if (!tr_.gpu.empty()) compact_gpu();
    for (auto& [index, samples] : dirs_) tr_.dir_samples.insert(tr_.dir_samples.end(), samples.begin(), samples.end());
    std::stable_sort(tr_.dir_samples.begin(), tr_.dir_samples.end(),
                     [](const DirSample& a, const DirSample& b) { return a.t < b.t; });
    TraceBuilder::finish();
  }

 private:
  static constexpr std::size_t kCompactAt = 64;
  static constexpr std::size_t kMaxNotes = 1000;  // NOTE lines past these say nothing a peak needs

  // Drops the closed stages that can hold no peak: those that end before the latest record and
  // hold none of the records kept (a later record cannot fall inside them). Stages named
  // `stage_` (--stage) are all kept: their windows are what the peak is taken over.
  void prune_stages();

  bool counts(Seconds t) const {
    if (windows_.empty()) return true;
    return std::any_of(windows_.begin(), windows_.end(), [t](const auto& w) { return t >= w.first && t <= w.second; });
  }

  template <typename S, typename Keys>
  void compact(std::vector<S>& v, Keys keys) {
    if (v.size() < kCompactAt) return;
    constexpr std::size_t n = std::tuple_size_v<decltype(keys(v.front()))>;
    std::array<std::size_t, n> best;
    best.fill(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (!counts(v[i].t)) continue;
      const auto k = keys(v[i]);
      for (std::size_t j = 0; j < n; ++j) {
        if (best[j] == v.size()) {
          best[j] = i;
          continue;
        }
        const auto b = keys(v[best[j]])[j];
        if (k[j] > b || (k[j] == b && v[i].t < v[best[j]].t)) best[j] = i;
      }
    }
    std::vector<S> kept;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const bool keep = i == 0 || i + 1 == v.size() || std::find(best.begin(), best.end(), i) != best.end();
      if (keep) kept.push_back(v[i]);
    }
    v.swap(kept);
  }

  template <typename S, typename Add>
  void latest_only(std::vector<S>& v, Add add) {
    add();
    if (v.size() > 1) v.erase(v.begin(), v.end() - 1);
  }

  void close_gpu_group();
  void compact_gpu();

  std::vector<std::pair<Seconds, Seconds>> windows_;
  std::string stage_;
  std::size_t stages_compact_at_ = kCompactAt;
  std::unordered_map<int, std::vector<DirSample>> dirs_;
  // GPU lines of one time are one figure (the sum of every device's latest): kept as whole
  // snapshots of every device, so that the sum read back is the one recorded.
  std::unordered_map<int, GpuSample> gpu_now_;  // each device's latest line
  std::optional<Seconds> group_t_;              // the time of the group being read
  std::uint64_t groups_ = 0;                    // groups closed so far
  std::vector<GpuSample> gpu_first_, gpu_best_, gpu_prev_;
  std::uint64_t best_group_ = 0, prev_group_ = 0;  // which group each snapshot is (first: 1)
  std::optional<Bytes> best_sum_;
};

void PeakReducer::prune_stages() {
  std::vector<Seconds> kept;
  auto add = [&kept](const auto& records) {
    for (const auto& r : records) kept.push_back(r.t);
  };
  add(tr_.mem), add(tr_.hwm), add(tr_.pss), add(tr_.cgroup), add(tr_.cgroup_windows), add(tr_.kinds), add(tr_.gpu),
      add(tr_.markers);
  for (const ChildSeries& c : tr_.children) add(c.samples);
  for (const auto& [index, samples] : dirs_) add(samples);
  std::sort(kept.begin(), kept.end());
  const Seconds latest = kept.empty() ? 0 : kept.back();
  // Wider than any reader's slack (analysis' kTimeSlack, 1e-4 s): a stage kept too many is harmless.
  constexpr Seconds kSlack = 1e-3;
  auto holds_a_record = [&](const Stage& s) {
    const auto it = std::lower_bound(kept.begin(), kept.end(), s.t_start - kSlack);
    return it != kept.end() && *it <= s.t_end + kSlack;
  };
  std::erase_if(tr_.stages,
                [&](const Stage& s) { return s.name != stage_ && s.t_end + kSlack < latest && !holds_a_record(s); });
  // The next pass comes after at least as many new stages as it has records and stages to look
  // at, so that its cost is spread over them (a trace of thousands of children keeps many
  // records) and stages that must stay (--stage's) do not make every later marker prune again.
  stages_compact_at_ = tr_.stages.size() + std::max({kCompactAt, tr_.stages.size(), kept.size()});
}

void PeakReducer::gpu(const GpuSample& s) {
  if (group_t_ && *group_t_ != s.t) close_gpu_group();
  if (!group_t_) group_t_ = s.t;
  TraceBuilder::gpu(s);
  gpu_now_[s.device] = s;
}

void PeakReducer::close_gpu_group() {
  if (!group_t_) return;
  std::vector<GpuSample> snapshot;
  Bytes sum = 0;
  for (const auto& [device, line] : gpu_now_) {
    GpuSample g = line;
    g.t = *group_t_;
    sum += g.tree;
    snapshot.push_back(g);
  }
  std::sort(snapshot.begin(), snapshot.end(),
            [](const GpuSample& a, const GpuSample& b) { return a.device < b.device; });
  ++groups_;
  if (groups_ == 1) gpu_first_ = snapshot;
  if (counts(*group_t_) && (!best_sum_ || sum > *best_sum_)) {
    best_sum_ = sum;
    gpu_best_ = snapshot;
    best_group_ = groups_;
  }
  gpu_prev_ = std::move(snapshot);
  prev_group_ = groups_;
  group_t_.reset();
  if (tr_.gpu.size() >= kCompactAt * std::max<std::size_t>(1, gpu_now_.size())) compact_gpu();
}

void PeakReducer::compact_gpu() {
  // Every group is closed here: the first, the highest and the latest snapshots stand for them
  // all, in their order (the latest carries every device's state on to the groups after it).
  std::vector<GpuSample> kept = gpu_first_;
  if (best_group_ > 1) kept.insert(kept.end(), gpu_best_.begin(), gpu_best_.end());
  if (prev_group_ > 1 && prev_group_ != best_group_) kept.insert(kept.end(), gpu_prev_.begin(), gpu_prev_.end());
  tr_.gpu.swap(kept);
}

}  // namespace

void detail::require_samples(const Trace& tr) {
  if (tr.mem.empty()) throw ParseError(tr.source, 0, "no memory samples (MEM lines): the trace is empty");
}

using detail::require_samples;

Trace read_trace(const std::string& path, std::vector<std::string>* warnings) {
  Trace tr;
  tr.source = path;
  TraceBuilder b(tr, warnings);
  parse_file(path, b);
  b.finish();
  require_samples(tr);
  return tr;
}

Trace read_trace_fd(int fd, const std::string& name, std::vector<std::string>* warnings) {
  Trace tr;
  tr.source = name;
  TraceBuilder b(tr, warnings);
  if (::lseek(fd, 0, SEEK_SET) != 0) throw ParseError(name, 0, std::strerror(errno));
  parse_fd(fd, name, b);
  b.finish();
  require_samples(tr);
  return tr;
}

Trace read_trace_peaks(const std::string& path, const std::vector<std::pair<Seconds, Seconds>>& windows,
                       const std::string& stage) {
  Trace tr;
  tr.source = path;
  PeakReducer b(tr, windows, stage);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw ParseError(path, 0, std::strerror(errno));
  try {
    parse_fd(fd, path, b);  // no bound on a stream: what is kept does not grow with it
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  b.finish();
  require_samples(tr);
  return tr;
}

Trace read_trace_text(std::string_view text, const std::string& name, std::vector<std::string>* warnings) {
  Trace tr;
  tr.source = name;
  TraceBuilder b(tr, warnings);
  parse_text(text, name, b);
  b.finish();
  require_samples(tr);
  return tr;
}

}  // namespace qprof::trace
