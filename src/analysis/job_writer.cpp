// SPDX-License-Identifier: Apache-2.0
// A job's trace written as its ranks' series are summed: the lines write_trace writes for
// job_trace, in memory flat in the ranks' length (qprof plot --sum's temporary trace).
#include <algorithm>
#include <optional>

#include "qprof/analysis/job.hpp"
#include "qprof/analysis/metric.hpp"
#include "qprof/trace/format.hpp"
#include "sum_walk.hpp"

namespace qprof::analysis {
using trace::CgroupSample;
using trace::MemSample;
using trace::PssSample;
using trace::Stage;
using trace::Trace;

namespace {

// A stage's Start or End marker line; write_trace orders a time's lines: MEM first, other
// samples, Start markers, End markers.
struct StageLine {
  Seconds t;
  int order;  // 3: Start, 4: End
  const Stage* stage;
};

std::vector<StageLine> stage_lines(const Trace& head) {
  std::vector<StageLine> lines;
  for (const Stage& s : head.stages) {
    lines.push_back({s.t_start, 3, &s});
    if (s.closed) lines.push_back({s.t_end, 4, &s});
  }
  std::stable_sort(lines.begin(), lines.end(), [](const StageLine& a, const StageLine& b) {
    return a.t < b.t || (a.t == b.t && a.order < b.order);
  });
  return lines;
}

// The summed series, one sample ahead: RSS as MEM lines, PSS with USS (where every rank has
// them) as PSS lines, each step of the two walks paired as job_trace pairs them, and the cgroup
// charge (where every rank has one) as CGROUP lines.
class SummedLines {
 public:
  SummedLines(const std::vector<const Trace*>& traces, Align align, Seconds origin)
      : origin_(origin), rss_(traces, Metric::rss, align) {
    if (detail::job_sums_pss(traces)) {
      pss_walk_.emplace(traces, Metric::pss, align);
      uss_walk_.emplace(traces, Metric::uss, align);
    }
    if (detail::job_sums_cgroup(traces)) charge_walk_.emplace(traces, Metric::cgroup, align);
    advance_mem();
    advance_pss();
    advance_charge();
  }
  const std::optional<MemSample>& mem() const { return mem_; }
  const std::optional<PssSample>& pss() const { return pss_; }
  const std::optional<CgroupSample>& charge() const { return charge_; }
  void advance_mem() {
    Seconds t = 0;
    Bytes sum = 0;
    mem_.reset();
    if (rss_.next(t, sum)) mem_ = MemSample{origin_ + t, sum};
  }
  void advance_pss() {
    pss_.reset();
    if (!pss_walk_) return;
    Seconds t = 0, t_uss = 0;
    Bytes pss = 0, uss = 0;
    if (pss_walk_->next(t, pss) && uss_walk_->next(t_uss, uss)) pss_ = PssSample{origin_ + t, pss, uss, std::nullopt};
  }
  void advance_charge() {
    charge_.reset();
    Seconds t = 0;
    Bytes sum = 0;
    if (charge_walk_ && charge_walk_->next(t, sum)) charge_ = detail::job_charge(origin_ + t, sum, charge_high_);
  }

 private:
  Seconds origin_;
  detail::SumWalk rss_;
  std::optional<detail::SumWalk> pss_walk_, uss_walk_, charge_walk_;
  std::optional<MemSample> mem_;
  std::optional<PssSample> pss_;
  std::optional<CgroupSample> charge_;
  Bytes charge_high_ = 0;
};

}  // namespace

bool job_streams(const std::vector<const Trace*>& traces) {
  return !traces.empty() && detail::all_reduced(traces) &&
         std::none_of(traces.begin(), traces.end(), [](const Trace* t) { return !t->gpu_devices.empty(); });
}

void write_job_trace(const std::vector<const Trace*>& traces, Align align, trace::Writer& out) {
  if (!job_streams(traces)) {
    trace::write_trace(job_trace(traces, align), out);
    return;
  }
  const Trace head = detail::job_head(traces, align);
  out.header(head.meta);
  out.cmdline(head.cmdline);
  SummedLines series(traces, align, job_clock(traces, align).origin);
  const std::vector<StageLine> stages = stage_lines(head);
  std::size_t io = 0, cpu = 0, stage = 0;
  // Of the heads of the six sources (in write_trace's order of kinds, which breaks ties), the
  // earliest line by time, then by its place in a time.
  for (;;) {
    constexpr int kNone = -1;
    int best = kNone;
    Seconds best_t = 0;
    int best_order = 0;
    const auto consider = [&](int source, Seconds t, int order) {
      if (best == kNone || t < best_t || (t == best_t && order < best_order)) {
        best = source;
        best_t = t;
        best_order = order;
      }
    };
    if (series.mem()) consider(0, series.mem()->t, 0);
    if (series.pss()) consider(1, series.pss()->t, 2);
    if (io < head.io.size()) consider(2, head.io[io].t, 2);
    if (cpu < head.cpu.size()) consider(3, head.cpu[cpu].t, 2);
    if (series.charge()) consider(4, series.charge()->t, 2);
    if (stage < stages.size()) consider(5, stages[stage].t, stages[stage].order);
    if (best == kNone) break;
    switch (best) {
      case 0:
        out.mem(series.mem()->t, series.mem()->bytes);
        series.advance_mem();
        break;
      case 1:
        out.pss(*series.pss());
        series.advance_pss();
        break;
      case 2:
        out.io(head.io[io++]);
        break;
      case 3:
        out.cpu(head.cpu[cpu++]);
        break;
      case 4:
        out.cgroup(*series.charge());
        series.advance_charge();
        break;
      default: {
        const StageLine& l = stages[stage++];
        out.mark(l.t, l.stage->name + (l.order == 3 ? " Start" : " End"));
      }
    }
  }
  for (const auto& [name, bytes] : head.peaks) out.peak(name, bytes);
  for (const std::string& n : head.notes) out.note(n);
  out.flush();
}

}  // namespace qprof::analysis
