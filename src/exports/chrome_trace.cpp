// SPDX-License-Identifier: Apache-2.0
// Trace-event format: https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU
// Each trace is a process (pid 1, 2, … in argument order: real PIDs of different hosts or runs
// could collide); its series are counter tracks ("C" events, one argument named after the unit,
// so that Perfetto calls the track "RSS MiB"); stages are complete events ("X") and checkpoints
// instant events ("i") on a thread, "markers"; a stage that overlaps another without nesting in
// it goes on a thread of its own ("stages 2", …: the format needs one thread's slices nested).
// Times are microseconds from each trace's own start, so runs line up at t = 0 as in qprof plot.
#include "chrome_trace.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <unordered_map>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "counter_rate.hpp"
#include "qprof/common/number_text.hpp"
#include "qprof/common/version.hpp"
#include "qprof/trace/format.hpp"
#include "qprof/trace/stages.hpp"
#include "text_out.hpp"
#include "trace_name.hpp"

namespace qprof::exports {
using trace::CgroupSample;
using trace::CpuSample;
using trace::ExitInfo;
using trace::GpuDevice;
using trace::GpuSample;
using trace::GpuUtilSample;
using trace::IoSample;
using trace::MemKindsSample;
using trace::MemSample;
using trace::PssSample;
using trace::Stage;
using trace::stage_start_name;
using trace::StageTracker;
using trace::TasksSample;
using trace::TraceMeta;

namespace {

constexpr int kMarkerThread = 1;
constexpr std::size_t kMaxStageThreads = 8;  // past these, the last one takes what does not nest
constexpr std::size_t kTopsKept = 256;       // per thread: older slices are taken as past

// The threads stages go on: in each, the slices not inside another (none overlapping),
// microseconds from the start. Stages come at their end; mprof's lines, or stages left open, may
// come in another order, so each placement looks at every top slice kept.
class StageThreads {
 public:
  // The thread (0-based) where [start, end] nests: every slice there it overlaps lies inside it.
  std::size_t place(double start, double end) {
    for (std::size_t i = 0; i < threads_.size(); ++i) {
      if (fits(threads_[i], start, end)) return put(i, start, end);
    }
    if (threads_.size() < kMaxStageThreads) threads_.emplace_back();
    return put(threads_.size() - 1, start, end);
  }

 private:
  using Slices = std::vector<std::pair<double, double>>;
  static bool fits(const Slices& tops, double start, double end) {
    return std::all_of(tops.begin(), tops.end(), [&](const auto& top) {
      const bool apart = top.second <= start || top.first >= end;
      return apart || (top.first >= start && top.second <= end);
    });
  }
  std::size_t put(std::size_t i, double start, double end) {
    Slices& tops = threads_[i];
    std::erase_if(tops, [&](const auto& top) { return top.first >= start && top.second <= end; });
    tops.emplace_back(start, end);
    if (tops.size() > kTopsKept) tops.erase(tops.begin());
    return i;
  }
  std::vector<Slices> threads_;
};
// JSON has no NaN: a value without a number is null.
std::string json_number(double v) { return number_text(v, "null"); }

struct TraceFacts {
  std::string label, path, command, host;
  std::optional<Seconds> start;
  std::optional<std::int64_t> rank;  // from the header of a multi-rank job's trace
};

class EventWriter : public trace::Visitor {
 public:
  EventWriter(std::ostream& out, bool& first, int pid, Unit unit, TraceFacts& facts)
      : out_(out), first_(first), pid_(pid), unit_(unit), unit_name_(unit_name(unit)), facts_(facts) {}

  void header(const TraceMeta& m) override {
    t0_ = m.start;
    qprof_ = m.format_version > 0;
    facts_.host = m.host;
    facts_.start = m.start;
    facts_.rank = m.job.rank;
  }
  void cmdline(std::string_view c) override {
    facts_.command = std::string(c);
    event("{\"ph\":\"M\",\"name\":\"process_labels\",\"pid\":" + std::to_string(pid_) +
          ",\"args\":{\"labels\":" + json_string(c) + "}}");
  }
  void mem(const MemSample& s) override {
    if (!t0_) start_at(s.t);
    last_t_ = s.t;
    last_mem_ = s.bytes;
    counter("RSS", s.t, in_unit(s.bytes, unit_));
  }
  void child(std::int64_t pid, const MemSample& s) override {
    auto [name, added] = child_names_.try_emplace(pid);
    if (added) name->second = "RSS pid " + std::to_string(pid);
    counter(name->second, s.t, in_unit(s.bytes, unit_));
  }
  void pss(const PssSample& s) override {
    counter("PSS", s.t, in_unit(s.pss, unit_));
    counter("USS", s.t, in_unit(s.uss, unit_));
  }
  void cgroup(const CgroupSample& s) override { counter("cgroup", s.t, in_unit(s.usage, unit_)); }
  void gpu_device(const GpuDevice& d) override { gpu_names_[d.index] = d.name; }
  void gpu(const GpuSample& s) override {
    const auto it = gpu_names_.find(s.device);
    std::string name = "GPU" + std::to_string(s.device);
    if (it != gpu_names_.end() && !it->second.empty()) name += " (" + it->second + ")";
    counter(name, s.t, in_unit(s.tree, unit_));
  }
  void kinds(const MemKindsSample& s) override {
    counter("RSS anon", s.t, in_unit(s.anon, unit_));
    counter("RSS file", s.t, in_unit(s.file, unit_));
    counter("RSS shmem", s.t, in_unit(s.shmem, unit_));
    counter("swap", s.t, in_unit(s.swap, unit_));
  }
  void tasks(const TasksSample& s) override {
    counter("threads", s.t, static_cast<double>(s.threads), "count");
    counter("processes", s.t, static_cast<double>(s.processes), "count");
    counter("VSZ", s.t, in_unit(s.vsz, unit_));
  }
  void gpu_util(const GpuUtilSample& s) override {
    const std::string name = "GPU" + std::to_string(s.device);
    counter(name + " busy", s.t, s.busy_percent, "%");
    counter(name + " memory bandwidth busy", s.t, s.mem_bw_percent, "%");
    if (s.tree_busy_percent) counter(name + " busy, the tree's share", s.t, *s.tree_busy_percent, "%");
  }
  void cpu(const CpuSample& s) override {
    if (const auto r = cpu_.add(s.t, s.cpu_seconds)) counter("CPU", s.t, *r * 100.0, "% of one core");
  }
  void io(const IoSample& s) override {
    const std::string per_s = unit_name_ + "/s";
    if (const auto r = read_.add(s.t, static_cast<double>(s.read_bytes)))
      counter("disk read", s.t, *r / unit_bytes(unit_), per_s);
    if (const auto r = write_.add(s.t, static_cast<double>(s.write_bytes)))
      counter("disk write", s.t, *r / unit_bytes(unit_), per_s);
  }
  void mark(Seconds t, std::string_view label) override {
    last_mark_t_ = t;
    if (auto stage = stages_.on_marker(label, t, last_mem_)) {
      complete(*stage);
    } else if (!stage_start_name(label)) {
      event("{\"ph\":\"i\",\"s\":\"t\",\"name\":" + json_string(label) + ",\"pid\":" + std::to_string(pid_) +
            ",\"tid\":" + std::to_string(kMarkerThread) + ",\"ts\":" + ts(t) + "}");
    }
  }
  // mprof's brackets: the stages of an mprof trace (a qprof trace's FUNC lines mirror its MARKs).
  // mprof writes the profiled functions' lines first (the child's, flushed at its exit), before
  // the samples that give the start: they wait for it.
  void func(std::string_view name, const MemSample& start, const MemSample& end) override {
    if (qprof_) return;
    Stage s;
    s.name = std::string(name);
    s.t_start = start.t;
    s.t_end = end.t;
    if (!t0_ && early_funcs_.size() < kMaxEarlyFuncs && early_bytes_ + s.name.size() <= kMaxEarlyBytes) {
      early_bytes_ += s.name.size();
      early_funcs_.push_back(std::move(s));
      return;
    }
    if (!t0_) start_at(early_funcs_.empty() ? s.t_start : early_funcs_.front().t_start);  // so many: not lost
    complete(s);
  }
  void exit(const ExitInfo& e) override {
    exit_t_ = e.t;
    std::string name = "exit status " + std::to_string(e.status);
    if (e.signal != 0) name += " (signal " + std::to_string(e.signal) + ")";
    if (e.timed_out) name += " (timed out)";
    event("{\"ph\":\"i\",\"s\":\"p\",\"name\":" + json_string(name) + ",\"pid\":" + std::to_string(pid_) +
          ",\"ts\":" + ts(e.t) + "}");
  }

  void finish() {
    if (!t0_ && !early_funcs_.empty()) start_at(early_funcs_.front().t_start);  // no sample: from the first call
    std::vector<Stage> open = stages_.unclosed(trace::open_stage_end(last_t_, last_mark_t_, exit_t_), last_mem_);
    in_end_order(open);
    for (const Stage& s : open) complete(s);
  }

 private:
  // Microseconds, whole: traces hold no finer times, and Unix seconds minus t0 leave float noise.
  std::string ts(Seconds t) const { return json_number(std::round((t - t0_.value_or(t)) * 1e6)); }
  void event(const std::string& json) {
    out_ << (first_ ? "\n" : ",\n") << json;
    first_ = false;
  }
  // Counter events are most of the output: each track's text up to its time, and each argument
  // name, is made once (escaping a name per event made the export 10x slower than reading).
  void counter(const std::string& name, Seconds t, double value, const std::string& key = "") {
    if (!t0_) start_at(t);
    auto [head, added] = heads_.try_emplace(name);
    if (added)
      head->second = "{\"ph\":\"C\",\"name\":" + json_string(name) + ",\"pid\":" + std::to_string(pid_) + ",\"ts\":";
    const std::string& arg_key = key.empty() ? unit_name_ : key;
    auto [arg, new_arg] = args_.try_emplace(arg_key);
    if (new_arg) arg->second = ",\"args\":{" + json_string(arg_key) + ":";
    out_ << (first_ ? "\n" : ",\n") << head->second << ts(t) << arg->second << json_number(value) << "}}";
    first_ = false;
  }
  // The trace's start, once known: the stages that waited for it go out in their order.
  void start_at(Seconds t) {
    t0_ = t;
    in_end_order(early_funcs_);
    for (const Stage& s : early_funcs_) complete(s);
    early_funcs_.clear();
    early_bytes_ = 0;
  }
  // As StageThreads takes them best: by end, and of one end the inner (later start) first.
  static void in_end_order(std::vector<Stage>& stages) {
    std::stable_sort(stages.begin(), stages.end(), [](const Stage& a, const Stage& b) {
      return a.t_end != b.t_end ? a.t_end < b.t_end : a.t_start > b.t_start;
    });
  }
  void complete(const Stage& s) {
    std::string name = s.name;
    if (!s.closed) name += " (never ended)";
    const double start = std::round((s.t_start - t0_.value_or(s.t_start)) * 1e6);
    const double dur = std::round((s.t_end - s.t_start) * 1e6);
    const std::size_t thread = stage_threads_.place(start, start + dur);
    const int tid = kMarkerThread + static_cast<int>(thread);
    if (thread >= named_threads_) {
      named_threads_ = thread + 1;
      event("{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" + std::to_string(pid_) +
            ",\"tid\":" + std::to_string(tid) + ",\"args\":{\"name\":\"stages " + std::to_string(thread + 1) + "\"}}");
    }
    event("{\"ph\":\"X\",\"name\":" + json_string(name) + ",\"cat\":\"stage\",\"pid\":" + std::to_string(pid_) +
          ",\"tid\":" + std::to_string(tid) + ",\"ts\":" + json_number(start) + ",\"dur\":" + json_number(dur) + "}");
  }

  std::ostream& out_;
  bool& first_;
  int pid_;
  Unit unit_;
  std::string unit_name_;
  TraceFacts& facts_;
  std::optional<Seconds> t0_;
  bool qprof_ = false;
  Seconds last_t_ = 0;
  std::optional<Seconds> last_mark_t_, exit_t_;  // where a stage left open ends (open_stage_end)
  Bytes last_mem_ = 0;
  StageTracker stages_;
  StageThreads stage_threads_;
  std::size_t named_threads_ = 1;  // the first is "markers", named by write_chrome_trace
  // mprof's FUNC lines before the first sample, their names at most 16 MiB together.
  static constexpr std::size_t kMaxEarlyFuncs = 1 << 16, kMaxEarlyBytes = std::size_t{16} << 20;
  std::vector<Stage> early_funcs_;
  std::size_t early_bytes_ = 0;
  std::map<int, std::string> gpu_names_;
  CounterRate cpu_, read_, write_;
  std::unordered_map<std::string, std::string> heads_;  // a track's event text up to "ts":
  std::unordered_map<std::string, std::string> args_;   // an argument's text up to its value
  std::unordered_map<std::int64_t, std::string> child_names_;
};

}  // namespace

void write_chrome_trace(const std::vector<Input>& inputs, Unit unit, std::ostream& out) {
  out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[";
  bool first = true;
  std::vector<TraceFacts> facts;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const int pid = static_cast<int>(i) + 1;
    TraceFacts f;
    f.path = inputs[i].path;
    const std::string p = std::to_string(pid);
    out << (first ? "\n" : ",\n") << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":" << p
        << ",\"tid\":" << kMarkerThread << ",\"args\":{\"name\":\"markers\"}}";
    first = false;
    EventWriter w(out, first, pid, unit, f);
    trace::parse_file(inputs[i].path, w);
    w.finish();
    facts.push_back(std::move(f));
  }
  // Named and ordered once every header is read (metadata events may come anywhere): a rank's
  // trace is "rank N (HOST)", as in the plot, and sorts by its rank, whatever the order of the
  // files given; two files of one name go by their paths.
  std::vector<TraceIdentity> ids;
  for (const TraceFacts& f : facts) ids.push_back({f.rank, f.host});
  const std::vector<std::string> names = trace_names(inputs, ids);
  for (std::size_t i = 0; i < facts.size(); ++i) {
    TraceFacts& f = facts[i];
    f.label = names[i];
    const std::string p = std::to_string(i + 1);
    const std::int64_t sort_index =
        f.rank ? *f.rank : 1000000000 + static_cast<std::int64_t>(i) + 1;  // traces without a rank after the ranks
    out << ",\n{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":" << p << ",\"args\":{\"name\":" << json_string(f.label)
        << "}},\n{\"ph\":\"M\",\"name\":\"process_sort_index\",\"pid\":" << p
        << ",\"args\":{\"sort_index\":" << sort_index << "}}";
  }
  out << "\n],\n\"metadata\":{\"producer\":" << json_string("qprof " + std::string(kVersion)) << ",\"traces\":[";
  for (std::size_t i = 0; i < facts.size(); ++i) {
    const TraceFacts& f = facts[i];
    out << (i ? "," : "") << "\n{\"pid\":" << i + 1 << ",\"label\":" << json_string(f.label)
        << ",\"file\":" << json_string(f.path) << ",\"command\":" << json_string(f.command)
        << ",\"host\":" << json_string(f.host);
    if (f.rank) out << ",\"rank\":" << *f.rank;
    if (f.start) out << ",\"start_unix_s\":" << json_number(*f.start);
    out << "}";
  }
  out << "\n]}}\n";
}

}  // namespace qprof::exports
