// SPDX-License-Identifier: Apache-2.0
// Builds a whole Trace from the streamed records (markers get the snapshot of every series at
// their place in the file, stages are paired from markers or taken from FUNC): read_trace's
// visitor, and the base of the readers that keep less of each series (builder.cpp,
// window_reducer.cpp).
#pragma once

#include <algorithm>
#include <set>
#include <unordered_map>

#include "qprof/trace/completeness.hpp"
#include "qprof/trace/format.hpp"
#include "qprof/trace/stages.hpp"

namespace qprof::trace::detail {

class TraceBuilder : public Visitor {
 public:
  TraceBuilder(Trace& trace, std::vector<std::string>* warnings) : tr_(trace), warnings_(warnings) {}

  void header(const TraceMeta& meta) override {
    tr_.meta = meta;
    clock_.start_at(meta.start, meta.interval);
  }
  // The last command, as mprof's own reader keeps it; a second one is a run appended.
  void cmdline(std::string_view c) override {
    runs_.cmdline_at(line());
    tr_.second_run_line = runs_.second_run();
    tr_.cmdline = std::string(c);
  }
  void mem(const MemSample& s) override {
    tr_.mem.push_back(s);
    now_.rss = s.bytes;
    clock_.mem_at(s.t, line());
    tr_.clock = clock_.findings();
  }
  void child(std::int64_t pid, const MemSample& s) override {
    auto [it, added] = child_index_.try_emplace(pid, tr_.children.size());
    if (added) tr_.children.push_back(ChildSeries{pid, {}});
    tr_.children[it->second].samples.push_back(s);
  }
  void mark(Seconds t, std::string_view label) override {
    tr_.markers.push_back(Marker{t, std::string(label), now_});
    if (!tr_.pss.empty()) tr_.markers.back().at.pss_age = std::max(0.0, t - tr_.pss.back().t);
    if (!gpu_latest_.empty()) tr_.markers.back().at.gpu_age = gpu_figure_age(t);
    if (auto stage = stages_.on_marker(label, t, now_.rss.value_or(0))) tr_.stages.push_back(std::move(*stage));
  }
  void func(std::string_view name, const MemSample& start, const MemSample& end) override {
    funcs_.push_back(Stage{std::string(name), start.t, end.t, start.bytes, end.bytes, true, Stage::Source::func});
  }
  void pss(const PssSample& s) override {
    tr_.pss.push_back(s);
    now_.pss = s.pss;
    now_.uss = s.uss;
  }
  void io(const IoSample& s) override {
    tr_.io.push_back(s);
    now_.read_bytes = s.read_bytes;
    now_.write_bytes = s.write_bytes;
  }
  void cpu(const CpuSample& s) override {
    tr_.cpu.push_back(s);
    now_.cpu_seconds = s.cpu_seconds;
  }
  void hwm(const MemSample& s) override { tr_.hwm.push_back(s); }
  void cgroup(const CgroupSample& s) override { tr_.cgroup.push_back(s); }
  void cgroup_window(const MemSample& s) override { tr_.cgroup_windows.push_back(s); }
  void gpu_device(const GpuDevice& d) override { tr_.gpu_devices.push_back(d); }
  void gpu(const GpuSample& s) override {
    tr_.gpu.push_back(s);
    // The sum is kept as devices change (unsigned: the updates cancel), and the ages as ordered
    // sets: summing and scanning every device per line was quadratic (200 000 devices: 38 s).
    Bytes& held = gpu_tree_[s.device];
    gpu_sum_ += s.tree - held;
    held = s.tree;
    now_.gpu_tree = gpu_sum_;
    const auto [latest, added] = gpu_latest_.try_emplace(s.device, s);
    if (!added) {
      tree_ages_.erase(tree_ages_.find(latest->second.tree_age.value_or(0)));
      age_minus_t_.erase(age_minus_t_.find(latest->second.tree_age.value_or(0) - latest->second.t));
      latest->second = s;
    }
    tree_ages_.insert(s.tree_age.value_or(0));
    age_minus_t_.insert(s.tree_age.value_or(0) - s.t);
  }
  void torch(const TorchSample& s) override { tr_.torch.push_back(s); }
  void kinds(const MemKindsSample& s) override { tr_.kinds.push_back(s); }
  void tasks(const TasksSample& s) override { tr_.tasks.push_back(s); }
  void gpu_util(const GpuUtilSample& s) override { tr_.gpu_util.push_back(s); }
  void peak(std::string_view name, Bytes b) override { tr_.peaks[std::string(name)] = b; }
  void dir_def(const WatchedDir& d) override { tr_.dirs.push_back(d); }
  void dir(const DirSample& s) override { tr_.dir_samples.push_back(s); }
  void note(std::string_view text) override { tr_.notes.emplace_back(text); }
  void unread(std::uint64_t processes) override { tr_.unread_processes = processes; }
  void oom_kill(const OomKill& k) override { tr_.oom_kills.push_back(k); }
  void exit(const ExitInfo& e) override { tr_.exit = e; }
  void warning(const std::string& w) override {
    tr_.last_line_cut = line();  // the reader's one warning: a cut last line
    if (warnings_) warnings_->push_back(w);
  }

  void finish() {
    if (tr_.is_qprof()) {
      const Seconds t_end =
          open_stage_end(tr_.mem.empty() ? 0 : tr_.mem.back().t,
                         tr_.markers.empty() ? std::nullopt : std::optional<Seconds>(tr_.markers.back().t),
                         tr_.exit ? std::optional<Seconds>(tr_.exit->t) : std::nullopt);
      for (Stage& s : stages_.unclosed(t_end, now_.rss.value_or(0))) tr_.stages.push_back(std::move(s));
    } else {
      // An mprof trace: its FUNC brackets are the stages (a qprof trace's FUNC lines only mirror
      // its marker stages, so they are not counted twice).
      for (Stage& s : funcs_) tr_.stages.push_back(std::move(s));
    }
    std::stable_sort(tr_.stages.begin(), tr_.stages.end(),
                     [](const Stage& a, const Stage& b) { return a.t_start < b.t_start; });
  }

 protected:
  Trace& tr_;

 private:
  std::vector<std::string>* warnings_;
  Snapshot now_;
  StageTracker stages_;
  std::vector<Stage> funcs_;
  AppendedRuns runs_;
  BackwardClock clock_;

 protected:
  std::unordered_map<std::int64_t, std::size_t> child_index_;

 private:
  std::unordered_map<int, Bytes> gpu_tree_;
  Bytes gpu_sum_ = 0;
  std::unordered_map<int, GpuSample> gpu_latest_;  // each device's latest GPU line
  // Over the devices' latest lines: each tree_age a, and a − t.
  std::multiset<Seconds> tree_ages_, age_minus_t_;
  // How old the summed GPU figure is at `t`: its oldest part, over the devices' latest lines,
  // max(0, t − g.t) + a = max(a, t + (a − g.t)), so the largest of either set gives it.
  Seconds gpu_figure_age(Seconds t) const {
    if (tree_ages_.empty()) return 0;
    return std::max({0.0, *tree_ages_.rbegin(), t + *age_minus_t_.rbegin()});
  }
};

// A read trace must hold at least one memory sample: throws ParseError otherwise.
void require_samples(const Trace& tr);

}  // namespace qprof::trace::detail
