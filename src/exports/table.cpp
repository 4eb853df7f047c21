// SPDX-License-Identifier: Apache-2.0
#include "table.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <deque>
#include <limits>
#include <unordered_set>

#include "counter_rate.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::exports {
using trace::CgroupSample;
using trace::CpuSample;
using trace::GpuDevice;
using trace::GpuSample;
using trace::GpuUtilSample;
using trace::IoSample;
using trace::MemKindsSample;
using trace::MemSample;
using trace::PssSample;
using trace::TasksSample;
using trace::TraceMeta;

namespace {

std::string suffix(Unit u) {
  if (u == Unit::B) return "bytes";
  std::string s(unit_name(u));
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

class Scanner : public trace::Visitor {
 public:
  explicit Scanner(ColumnSet& c) : c_(c) {}
  void header(const TraceMeta& m) override { identity = {m.job.rank, m.host}; }
  void pss(const PssSample&) override { c_.pss = true; }
  void cgroup(const CgroupSample&) override { c_.cgroup = true; }
  void cpu(const CpuSample&) override { c_.cpu = true; }
  void io(const IoSample&) override { c_.io = true; }
  void gpu_device(const GpuDevice& d) override { add(c_.gpu, d.index, gpus_seen_, c_.gpus_left_out); }
  void gpu(const GpuSample& s) override { add(c_.gpu, s.device, gpus_seen_, c_.gpus_left_out); }
  void child(std::int64_t pid, const MemSample&) override { add(c_.child, pid, children_seen_, c_.children_left_out); }
  void kinds(const MemKindsSample&) override { c_.kinds = true; }
  void tasks(const TasksSample&) override { c_.tasks = true; }
  void gpu_util(const GpuUtilSample& s) override {
    if (c_.gpu_util.size() < kMaxGpuUtilColumns) c_.gpu_util.emplace(s.device, 0);
  }
  TraceIdentity identity;

 private:
  static constexpr std::size_t kMaxGpuUtilColumns = 64;  // a hostile trace cannot widen rows without end
  // The first kMaxColumnsPerKind keys get a column; each other key is counted once.
  template <class Key>
  static void add(std::map<Key, std::size_t>& columns, Key key, std::unordered_set<Key>& seen, std::size_t& left_out) {
    if (columns.count(key)) return;
    if (columns.size() < ColumnSet::kMaxColumnsPerKind)
      columns.emplace(key, 0);
    else if (seen.insert(key).second)
      ++left_out;
  }
  ColumnSet& c_;
  std::unordered_set<int> gpus_seen_;
  std::unordered_set<std::int64_t> children_seen_;
};

// Rows held back until no line of the trace can still concern them: a PSS reading is written at
// the next stats pass, after the samples taken meanwhile (up to a pass's length late), while a
// cgroup or CPU line follows the MEM line of its own sample. Bounded: beyond kHeldRows rows or
// kHeldSeconds of trace, the oldest row goes as it is.
constexpr std::size_t kHeldRows = 4096;
constexpr Seconds kHeldSeconds = 10;
// The MEM line's time is rounded to 0.1 ms, its sample's other lines carry the microsecond.
constexpr Seconds kSameSample = 1e-4;

class RowStreamer : public trace::Visitor {
 public:
  RowStreamer(const ColumnSet& c, Unit unit, const std::function<void(const Row&)>& emit)
      : c_(c), unit_(unit), emit_(emit) {
    pos_pss_ = c.pss ? next_++ : npos;
    pos_uss_ = c.pss ? next_++ : npos;
    pos_cgroup_ = c.cgroup ? next_++ : npos;
    pos_gpu_ = next_;
    next_ += c.gpu.size();
    pos_cpu_ = c.cpu ? next_++ : npos;
    pos_read_ = c.io ? next_++ : npos;
    pos_write_ = c.io ? next_++ : npos;
    pos_kinds_ = next_;
    next_ += c.kinds ? 4 : 0;
    pos_tasks_ = next_;
    next_ += c.tasks ? 3 : 0;
    pos_gpu_util_ = next_;
    next_ += c.gpu_util.size();
    pos_child_ = next_;
    next_ += c.child.size();
    latest_.resize(next_);
    latest_at_.assign(next_, -std::numeric_limits<Seconds>::infinity());
  }

  void header(const TraceMeta& m) override { t0_ = m.start; }
  void mem(const MemSample& s) override {
    if (!t0_) t0_ = s.t;
    Held row{s.t, {std::round((s.t - *t0_) * 1e6) / 1e6, latest_}, latest_at_};  // traces hold µs at most
    row.row.values[0] = in_unit(s.bytes, unit_);
    // A child's cell is of its own sample only.
    std::fill(row.row.values.begin() + static_cast<std::ptrdiff_t>(pos_child_), row.row.values.end(), std::nullopt);
    held_.push_back(std::move(row));
    while (held_.size() > kHeldRows || held_.back().t - held_.front().t > kHeldSeconds) emit_front();
  }
  // CHLD lines follow the MEM line of their sample, with its time.
  void child(std::int64_t pid, const MemSample& s) override {
    if (held_.empty() || s.t != held_.back().t) return;
    const auto it = c_.child.find(pid);
    if (it != c_.child.end()) held_.back().row.values[pos_child_ + it->second] = in_unit(s.bytes, unit_);
  }
  void pss(const PssSample& s) override {
    set(s.t, pos_pss_, in_unit(s.pss, unit_));
    set(s.t, pos_uss_, in_unit(s.uss, unit_));
  }
  void cgroup(const CgroupSample& s) override { set(s.t, pos_cgroup_, in_unit(s.usage, unit_)); }
  void gpu(const GpuSample& s) override {
    const auto it = c_.gpu.find(s.device);
    if (it != c_.gpu.end()) set(s.t, pos_gpu_ + it->second, in_unit(s.tree, unit_));
  }
  void cpu(const CpuSample& s) override {
    cpu_.add(s.t, s.cpu_seconds);
    if (const auto r = cpu_.rate()) set(s.t, pos_cpu_, *r * 100.0);
  }
  void io(const IoSample& s) override {
    read_.add(s.t, static_cast<double>(s.read_bytes));
    write_.add(s.t, static_cast<double>(s.write_bytes));
    if (const auto r = read_.rate()) set(s.t, pos_read_, *r / unit_bytes(unit_));
    if (const auto r = write_.rate()) set(s.t, pos_write_, *r / unit_bytes(unit_));
  }
  void kinds(const MemKindsSample& s) override {
    set(s.t, pos_kinds_, in_unit(s.anon, unit_));
    set(s.t, pos_kinds_ + 1, in_unit(s.file, unit_));
    set(s.t, pos_kinds_ + 2, in_unit(s.shmem, unit_));
    set(s.t, pos_kinds_ + 3, in_unit(s.swap, unit_));
  }
  void tasks(const TasksSample& s) override {
    set(s.t, pos_tasks_, static_cast<double>(s.processes));
    set(s.t, pos_tasks_ + 1, static_cast<double>(s.threads));
    set(s.t, pos_tasks_ + 2, in_unit(s.vsz, unit_));
  }
  void gpu_util(const GpuUtilSample& s) override {
    const auto it = c_.gpu_util.find(s.device);
    if (it != c_.gpu_util.end()) set(s.t, pos_gpu_util_ + it->second, s.busy_percent);
  }

  void flush() {
    while (!held_.empty()) emit_front();
  }

 private:
  struct Held {
    Seconds t;  // the sample's own time
    Row row;
    std::vector<Seconds> at;  // each cell's line's time: a line of an earlier time never replaces it
  };

  // A slower series' value from `t` on: each row held from that time (its own sample's line
  // within kSameSample) and every row after, where no line of a later time set it (lines of one
  // series written out of their order: the latest by time is the row's, of one time the last).
  void set(Seconds t, std::size_t pos, double value) {
    if (pos >= latest_.size()) return;  // a kind the column scan did not see: no column (a defence)
    if (t >= latest_at_[pos]) {
      latest_[pos] = value;
      latest_at_[pos] = t;
    }
    for (auto it = held_.rbegin(); it != held_.rend() && it->t + kSameSample >= t; ++it) {
      if (t < it->at[pos]) continue;
      it->row.values[pos] = value;
      it->at[pos] = t;
    }
  }

  void emit_front() {
    emit_(held_.front().row);
    held_.pop_front();
  }

  static constexpr std::size_t npos = static_cast<std::size_t>(-1);
  const ColumnSet& c_;
  Unit unit_;
  const std::function<void(const Row&)>& emit_;
  std::size_t next_ = 1;  // 0 is the RSS
  std::size_t pos_pss_, pos_uss_, pos_cgroup_, pos_gpu_, pos_cpu_, pos_read_, pos_write_, pos_child_;
  std::size_t pos_kinds_, pos_tasks_, pos_gpu_util_;
  std::optional<Seconds> t0_;
  std::vector<std::optional<double>> latest_;  // each column's latest value: a new row starts from it
  std::vector<Seconds> latest_at_;             // and its line's time
  std::deque<Held> held_;
  CounterRate cpu_, read_, write_;
};

}  // namespace

Result<TraceIdentity> ColumnSet::scan(const TraceSource& trace) {
  Scanner s(*this);
  if (Result<void> read = trace.parse(s); !read) return read.failure();
  std::size_t i = 0;
  for (auto& [index, pos] : gpu) pos = i++;
  i = 0;
  for (auto& [pid, pos] : child) pos = i++;
  i = 0;
  for (auto& [index, pos] : gpu_util) pos = i++;
  return s.identity;
}

std::vector<Column> ColumnSet::columns(Unit unit) const {
  const std::string u(unit_name(unit)), s = suffix(unit);
  std::vector<Column> out = {{"time_s", "s"}, {"rss_" + s, u}};
  if (pss) {
    out.push_back({"pss_" + s, u});
    out.push_back({"uss_" + s, u});
  }
  if (cgroup) out.push_back({"cgroup_" + s, u});
  for (const auto& [index, pos] : gpu) out.push_back({"gpu" + std::to_string(index) + "_" + s, u});
  if (cpu) out.push_back({"cpu_percent", "% of one core"});
  if (io) {
    out.push_back({"read_" + s + "_per_s", u + "/s"});
    out.push_back({"write_" + s + "_per_s", u + "/s"});
  }
  if (kinds) {
    for (const char* k : {"anon_", "file_", "shmem_", "swap_"}) out.push_back({k + s, u});
  }
  if (tasks) {
    out.push_back({"processes", "count"});
    out.push_back({"threads", "count"});
    out.push_back({"vsz_" + s, u});
  }
  for (const auto& [index, pos] : gpu_util) out.push_back({"gpu" + std::to_string(index) + "_busy_percent", "%"});
  for (const auto& [pid, pos] : child) out.push_back({"child_" + std::to_string(pid) + "_" + s, u});
  return out;
}

Result<void> stream_rows(const TraceSource& trace, const ColumnSet& columns, Unit unit,
                         const std::function<void(const Row&)>& emit) {
  RowStreamer r(columns, unit, emit);
  if (Result<void> read = trace.parse(r); !read) return read;
  r.flush();
  return {};
}

}  // namespace qprof::exports
