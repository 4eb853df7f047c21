// SPDX-License-Identifier: Apache-2.0
#include "end_figures.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <string>

#include "qprof/common/units.hpp"
#include "qprof/record/launcher.hpp"
#include "qprof/trace/bracket.hpp"
#include "qprof/trace/footprint.hpp"

namespace qprof::record::session {
using trace::bound_is_useful;
using trace::BracketInputs;
using trace::ExitInfo;
using trace::is_vsz_peak;
using trace::make_bracket;
using trace::splits_peak;

namespace {

CgroupReport record_cgroup(const TreeCgroup& cgroup, const Sampler& sampler, trace::Writer& out) {
  CgroupReport report;
  if (auto peak = cgroup.peak()) {
    report.peak = *peak;
    out.peak(trace::kPeakCgroup, *peak);
  }
  if (const auto largest = sampler.largest_cgroup();
      largest && (!report.peak || trace::near_peak(largest->usage, *report.peak)))
    report.droppable_cache = largest->droppable_cache();
  report.oom_kills = cgroup.oom_kills();
  return report;
}

// Σ VmHWM is written as a bound only when every process's peak is covered; the bracket raises
// it to every figure that must lie below it.
HwmReport record_hwm_sum(const TreeAccounting::Totals& totals, const Sampler& sampler, trace::Writer& out,
                         Notices& notices, const RunReport& report) {
  HwmReport hwm;
  hwm.uncovered = totals.uncovered;
  hwm.capped = totals.capped;
  BracketInputs in;
  if (report.kernel_process_peak) in.kernel_process = *report.kernel_process_peak;
  in.hwm_sum = totals.hwm_sum;
  if (sampler.count() > 0) in.sampled_rss = sampler.peak().bytes;
  if (report.pss.peak) in.sampled_pss = report.pss.peak->pss;
  hwm.sum = make_bracket(in).upper.value_or(totals.hwm_sum);
  // The bracket's raise hides an accounting defect from every reader: say so in the trace, so
  // that a Σ VmHWM that fell below a figure it must bound is seen (and fails the bounds tests).
  if (hwm.sum > totals.hwm_sum && totals.uncovered == 0) {
    out.note("Σ VmHWM as read (" + std::to_string(totals.hwm_sum) + " bytes) was below a figure it bounds; raised to " +
             std::to_string(hwm.sum) + " bytes");
  }
  if (totals.uncovered == 0 && report.sampling.unread_members == 0) {
    out.peak(trace::kPeakHwmSum, hwm.sum);
  } else if (totals.uncovered == 0) {
    out.peak(trace::kPeakHwmSumPartial, hwm.sum);  // the unread members' peaks are missing
  } else {
    out.peak(trace::kPeakHwmSumPartial, hwm.sum);
    const std::string why = "Σ VmHWM is not an upper bound: " + std::to_string(totals.uncovered) +
                            (totals.uncovered == 1 ? " process was" : " processes were") +
                            " reaped by a parent that qprof never reaped, and may have grown after its last reading";
    // Attached, the process's own children are reaped by their parents, never by qprof: the
    // normal case, and the summary gives no upper bound then. Said only where it is a surprise.
    if (report.attached) {
      notices.note_quietly(why);
    } else {
      notices.warn(why);
    }
  }
  return hwm;
}

// The KINDS/TASKS/CPU/IO figures of the whole run, once the accounting is closed. The split and
// the VSZ peak are kept only where they agree with the Σ RSS peak (trace/usage_samples.hpp).
UsageReport usage_report(const TreeSources& in, const TreeAccounting::Totals& totals, Bytes rss_peak) {
  const UsageSeries& usage = in.sampler.usage();
  UsageReport u;
  u.cpu_seconds = totals.cpu_seconds;
  u.io = totals.io;
  u.peak_swap = usage.peak_swap();
  u.most_tasks = usage.most_tasks();
  u.readings = usage.readings();
  if (const auto largest = usage.largest(); largest && splits_peak(*largest, rss_peak)) u.kinds_at_peak = largest;
  if (is_vsz_peak(usage.peak_vsz(), rss_peak)) u.peak_vsz = usage.peak_vsz();
  u.cpu_peak_percent = in.cpu_peak_percent;
  u.stats_interval = in.stats_interval;
  return u;
}

double own_cpu_seconds() {
  rusage self{};
  getrusage(RUSAGE_SELF, &self);
  return static_cast<double>(self.ru_utime.tv_sec + self.ru_stime.tv_sec) +
         static_cast<double>(self.ru_utime.tv_usec + self.ru_stime.tv_usec) * 1e-6;
}

void warn_missed_spike(Seconds asked_interval, Notices& notices, const RunReport& report) {
  if (!report.kernel_process_peak) return;
  const Bytes sampled = report.sampled_peak ? report.sampled_peak->bytes : 0;
  const Bytes margin = std::max<Bytes>(Bytes{1} << 20, sampled / 50);
  if (*report.kernel_process_peak <= sampled + margin) return;
  notices.warn("the sampled tree peak (" + human_bytes(sampled) + ") is below the kernel's peak of a single process (" +
               human_bytes(*report.kernel_process_peak) +
               "): a spike between samples was missed; try a smaller --interval (now " + human_seconds(asked_interval) +
               ")");
}

}  // namespace

PssReport pss_report(const Sampler& sampler) {
  PssReport r;
  r.peak = sampler.peak_pss();
  if (r.peak) r.uss_peak = sampler.peak_uss();
  r.unreclaimable_peak = sampler.peak_pss_unreclaimable();
  if (const PssSampler* pss = sampler.pss_sampler()) {
    r.interval = pss->interval();
    r.passes = pss->passes();
    r.rise_passes = pss->rise_passes();
    r.rereads = pss->rereads();
  }
  return r;
}

void record_tree_figures(const TreeSources& in, trace::Writer& out, Notices& notices, RunReport& report) {
  Sampler& sampler = in.sampler;
  if (in.cgroup && in.cgroup->has_memory()) report.cgroup = record_cgroup(*in.cgroup, sampler, out);
  sampler.close_accounting();
  const TreeAccounting::Totals& totals = sampler.totals();
  report.usage = usage_report(in, totals, report.sampled_peak ? report.sampled_peak->bytes : 0);
  report.pss = pss_report(sampler);
  report.cgroup.unreclaimable_peak = sampler.peak_cgroup_unreclaimable();
  report.hwm = record_hwm_sum(totals, sampler, out, notices, report);
  report.footprint = footprint_of_run(report);
  if (totals.uncovered == 0 && report.sampling.unread_members == 0) {
    const Bytes peak =
        std::max(report.sampled_peak ? report.sampled_peak->bytes : 0, report.footprint ? report.footprint->peak : 0);
    report.hwm.useful = bound_is_useful(report.hwm.sum, peak);
  }
  report.profiler_cpu_seconds = own_cpu_seconds();
  warn_missed_spike(in.asked_interval, notices, report);
  if (in.own_cgroup) {
    // The job shares qprof's cgroup: a kill counted there during the run is the OOM killer's.
    const auto now = oom_kills_in(in.own_cgroup->dir, in.own_cgroup->v1);
    if (now && *now > in.own_cgroup->oom_kills) report.cgroup.oom_kills = *now - in.own_cgroup->oom_kills;
  }
}

ExitReport record_exit(const ExitTracker& exit, const std::string& command_name, Seconds t_end, trace::Writer& out,
                       const RunReport& report, const Speaker& speaker) {
  KillSource source = KillSource::unknown;
  // The OOM killer sends SIGKILL only: after --timeout's SIGTERM, a SIGTERM death is qprof's.
  if (exit.killed())
    source = KillSource::qprof_timeout;
  else if (exit.timed_out())
    source = KillSource::qprof_timeout_term;
  else if ((report.cgroup.oom_kills && *report.cgroup.oom_kills > 0) ||
           std::any_of(report.oom_events.begin(), report.oom_events.end(),
                       [](const trace::OomKill& k) { return k.role == "command"; }))
    source = KillSource::oom_killer;
  ExitReport ended;
  ended.timed_out = exit.timed_out();
  ended.status_known = exit.wait_status_known();
  ended.still_running = report.attached && !exit.exited();
  const ExitDescription described =
      ended.status_known ? describe_wait_status(exit.wait_status(), command_name, source) : ExitDescription{};
  ended.status = described.exit_status;
  ended.signal = described.signal;
  out.exit(ExitInfo{t_end, ended.status, ended.signal, ended.timed_out, ended.status_known});
  if (!described.message.empty()) speaker.line(described.message);
  return ended;
}

}  // namespace qprof::record::session
