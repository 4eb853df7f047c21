#include "session_state.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "qprof/common/units.hpp"
#include "qprof/record/launcher.hpp"
#include "qprof/trace/bracket.hpp"

namespace qprof::session_detail {

void Session::finish_trace() {
  finish_watch();
  const Seconds t_end = clock_->unix_at(monotonic_ns());
  report_.duration = t_end - report_.start;
  for (const Stage& s : stages_.unclosed(sampler_->last().t, sampler_->last().bytes)) {
    warn("stage '" + s.name + "' was started but never ended");
    report_.stages.push_back(s);
  }
  if (sampler_->count() > 0) report_.sampled_peak = sampler_->peak();
  check_unread_members();
  if (report_.unread_members > 0) {
    warn(std::to_string(report_.unread_members) +
         " process(es) of the tree could not be read (out of file descriptors): every figure of this run misses "
         "them and is incomplete");
    out_->unread(report_.unread_members);
  }
  if (report_.samples > 1) {
    // Time stopped by job control took no samples and is not the schedule's.
    const Seconds sampling = std::max(0.0, last_regular_t_ - first_regular_t_ - report_.stopped_seconds);
    report_.mean_interval = sampling / static_cast<double>(report_.samples - 1);
  }

  // From wait4 of the tree's processes rather than RUSAGE_CHILDREN, which would also count the
  // GPU backends' helpers.
  if (kernel_peak_ > 0) {
    report_.kernel_process_peak = kernel_peak_;
    out_->peak(dat::kPeakKernelProcess, kernel_peak_);
  }
  finish_gpu();
  if (cgroup_ && cgroup_->has_memory()) {
    if (auto peak = cgroup_->peak()) {
      report_.cgroup_peak = *peak;
      out_->peak(dat::kPeakCgroup, *peak);
    }
    if (const auto largest = sampler_->largest_cgroup()) {
      report_.cgroup_anon = largest->anon;
      report_.cgroup_file = largest->file;
    }
    report_.oom_kills = cgroup_->oom_kills();
  }
  sampler_->close_accounting();
  const TreeAccounting::Totals& totals = sampler_->totals();
  report_.cpu_seconds = totals.cpu_seconds;
  report_.io = totals.io;
  report_.kinds_at_peak = sampler_->usage().largest();
  report_.peak_swap = sampler_->usage().peak_swap();
  report_.most_tasks = sampler_->usage().most_tasks();
  report_.peak_vsz = sampler_->usage().peak_vsz();
  report_.pss_peak = sampler_->peak_pss();
  if (report_.pss_peak) report_.uss_peak = sampler_->peak_uss();
  report_.pss_unreclaimable_peak = sampler_->peak_pss_unreclaimable();
  report_.cgroup_anon_peak = sampler_->peak_cgroup_anon();
  // Σ VmHWM is written as a bound only when every process's peak is covered; the bracket raises
  // it to every figure that must lie below it.
  report_.hwm_uncovered = totals.uncovered;
  report_.hwm_capped = totals.capped;
  BracketInputs in;
  if (kernel_peak_ > 0) in.kernel_process = kernel_peak_;
  in.hwm_sum = totals.hwm_sum;
  if (sampler_->count() > 0) in.sampled_rss = sampler_->peak().bytes;
  if (report_.pss_peak) in.sampled_pss = report_.pss_peak->pss;
  report_.hwm_sum = make_bracket(in).upper.value_or(totals.hwm_sum);
  // The bracket's raise hides an accounting defect from every reader: say so in the trace, so
  // that a Σ VmHWM that fell below a figure it must bound is seen (and fails the bounds tests).
  if (report_.hwm_sum > totals.hwm_sum && totals.uncovered == 0) {
    out_->note("Σ VmHWM as read (" + std::to_string(totals.hwm_sum) +
               " bytes) was below a figure it bounds; raised to " + std::to_string(report_.hwm_sum) + " bytes");
  }
  if (totals.uncovered == 0 && report_.unread_members == 0) {
    out_->peak(dat::kPeakHwmSum, report_.hwm_sum);
  } else if (totals.uncovered == 0) {
    out_->peak(dat::kPeakHwmSumPartial, report_.hwm_sum);  // the unread members' peaks are missing
  } else {
    out_->peak(dat::kPeakHwmSumPartial, report_.hwm_sum);
    warn("Σ VmHWM is not an upper bound: " + std::to_string(totals.uncovered) +
         " process(es) were reaped by a parent that qprof never reaped, and may have grown after their last reading");
  }
  if (const PssSampler* pss = sampler_->pss_sampler()) {
    report_.pss_interval = pss->interval();
    report_.pss_passes = pss->passes();
    report_.pss_rise_passes = pss->rise_passes();
  }
  report_.footprint = footprint_of_run(report_);
  rusage self{};
  getrusage(RUSAGE_SELF, &self);
  report_.profiler_cpu_seconds = static_cast<double>(self.ru_utime.tv_sec + self.ru_stime.tv_sec) +
                                 static_cast<double>(self.ru_utime.tv_usec + self.ru_stime.tv_usec) * 1e-6;
  const Bytes sampled = report_.sampled_peak ? report_.sampled_peak->bytes : 0;
  if (report_.kernel_process_peak) {
    const Bytes margin = std::max<Bytes>(Bytes{1} << 20, sampled / 50);
    if (*report_.kernel_process_peak > sampled + margin) {
      warn("the sampled tree peak (" + human_bytes(sampled) + ") is below the kernel's peak of a single process (" +
           human_bytes(*report_.kernel_process_peak) + "): a spike between samples was missed; try a smaller --interval (now " +
           human_seconds(o_.interval) + ")");
    }
  }

  if (own_cgroup_) {
    // The job shares qprof's cgroup: a kill counted there during the run is the OOM killer's.
    const auto now = oom_kills_in(own_cgroup_->dir, own_cgroup_->v1);
    if (now && *now > own_cgroup_->oom_kills) report_.oom_kills = *now - own_cgroup_->oom_kills;
  }
  KillSource source = KillSource::unknown;
  if (killed_) source = KillSource::qprof_timeout;
  else if (report_.oom_kills && *report_.oom_kills > 0) source = KillSource::oom_killer;
  if (attached_ && !cmd_exited_) report_.exit_status_known = false;  // still running
  const std::string name = attached_ ? "process " + std::to_string(cmd_pid_) : o_.command.front();
  const ExitDescription exit = report_.exit_status_known ? describe_wait_status(cmd_status_, name, source) : ExitDescription{};
  report_.exit_status = exit.exit_status;
  report_.signal = exit.signal;
  out_->exit(ExitInfo{t_end, exit.exit_status, exit.signal, report_.timed_out, report_.exit_status_known});
  if (!exit.message.empty()) std::cerr << exit.message << '\n';
  flush_trace();
  if (trace_intact() && !out_->close()) {
    // As a failed write: said, and whatever would read the trace back (--yaml-stream) is told.
    report_.trace_error = out_->error();
    std::cerr << "qprof: " << report_.trace_error << ": the trace may be incomplete\n";
    if (hooks_.on_trace_failed) hooks_.on_trace_failed();
  }
  if (!trace_intact()) report_.warnings.push_back(report_.trace_error + ": the trace is incomplete");
}

void Session::finish_gpu() {
  if (!gpu_) return;
  gpu_->stop();
  const gpu::Summary g = gpu_->summary();
  report_.gpu_backend = g.backend;
  report_.gpu_is_device_total = g.any_device_total;
  if (g.samples > 0) report_.gpu_peak = MemSample{g.peak_tree_total_t, g.peak_tree_total};
  for (const gpu::DeviceSummary& d : g.devices) {
    if (d.index < 0) continue;
    report_.gpu_devices.push_back(d.name + " (" + d.uuid + "): the tree " + human_bytes(d.peak_tree) +
                                  (d.tree_is_device_total ? " (device total)" : "") + ", the device " +
                                  human_bytes(d.peak_used) + " of " + human_bytes(d.total) +
                                  (d.util_samples > 0 ? ", busy " + std::to_string(static_cast<int>(std::lround(
                                                            d.busy_percent_sum / static_cast<double>(d.util_samples)))) +
                                                            " % on average"
                                                      : ""));
  }
}

}  // namespace qprof::session_detail
