#include "session_state.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <iostream>

#include "qprof/gpu/backend.hpp"

namespace qprof::session_detail {

void Session::loop() {
  const std::int64_t period = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::llround(o_.interval * kNs)));
  std::int64_t next = start_ns_;
  stats_period_ns_ = std::max(period, static_cast<std::int64_t>(std::llround(o_.stats_interval * kNs)));
  next_stats_ns_ = start_ns_;
  last_flush_ns_ = start_ns_;
  while (true) {
    std::int64_t now = monotonic_ns();
    if (now >= next) {
      regular_sample(now);
      next = next_deadline(next, period, monotonic_ns(), report_.missed_deadlines);
    }
    if (now >= next_stats_ns_) {
      stats_sample(now);
      std::uint64_t skipped = 0;
      next_stats_ns_ = next_deadline(next_stats_ns_, stats_period_ns_, monotonic_ns(), skipped);
    }
    take_markers();
    if (signals_->take_child_event()) reap();
    if (attached_) watch_attached();
    relay_signals();
    if (job_control()) {
      // Continued after a stop: the schedule starts again from now, and the time stopped is no
      // deadline missed.
      next = next_stats_ns_ = monotonic_ns();
      continue;
    }
    if (finished()) break;
    now = monotonic_ns();
    enforce_timeout(now);

    std::int64_t wake_at = std::min(next, next_stats_ns_);
    if (o_.timeout && kill_at_ns_ < 0) wake_at = std::min(wake_at, start_ns_ + static_cast<std::int64_t>(*o_.timeout * kNs));
    if (kill_at_ns_ >= 0 && !killed_) wake_at = std::min(wake_at, kill_at_ns_);
    if (now - last_flush_ns_ >= kFlushEveryNs || wake_at - now >= kFlushEveryNs) {
      flush_trace();
      last_flush_ns_ = now;
    }
    sleep_until_ns(wake_at);
  }
}

void Session::check_unread_members() {
  const std::size_t n = tree_->unread();
  if (n == report_.unread_members) return;
  if (report_.unread_members == 0) {
    rlimit files{};
    ::getrlimit(RLIMIT_NOFILE, &files);
    warn("out of file descriptors (limit " + std::to_string(files.rlim_cur) +
         "): the /proc files of processes of the tree cannot all be opened; the figures miss those processes "
         "(counted at the end)");
  }
  report_.unread_members = n;
}

void Session::regular_sample(std::int64_t now) {
  const auto s = sampler_->sample(now);
  check_unread_members();
  if (!s) return;
  check_limit(s->bytes);
  gpu_sample(now, s->t);
  if (report_.samples == 0) first_regular_t_ = s->t;
  last_regular_t_ = s->t;
  ++report_.samples;
  if (live_) show_live(now, *s);
}

void Session::show_live(std::int64_t now, const MemSample& s) {
  LiveStatus status;
  status.elapsed = static_cast<double>(now - start_ns_) / kNs;
  status.rss = s.bytes;
  status.peak_rss = sampler_->peak().bytes;
  status.footprint = sampler_->footprint_now();
  status.peak_footprint = sampler_->footprint_peak();
  if (gpu_) status.gpu = gpu_->last_tree_total();
  status.cpu_percent = live_cpu_percent_;
  status.stage = live_stage_;
  live_->update(status, now);
}

void Session::stats_sample(std::int64_t now) {
  sampler_->sample_stats(now);
  drain_watch();
  const CpuSample cpu{clock_->unix_at(now), sampler_->totals().cpu_seconds};
  if (last_cpu_ && cpu.t - last_cpu_->t >= 0.5 * o_.stats_interval) {
    const double percent = 100.0 * (cpu.cpu_seconds - last_cpu_->cpu_seconds) / (cpu.t - last_cpu_->t);
    report_.cpu_peak_percent = std::max(report_.cpu_peak_percent, percent);
    live_cpu_percent_ = percent;
    last_cpu_ = cpu;
  } else if (!last_cpu_) {
    last_cpu_ = cpu;
  }
}

void Session::open_gpu() {
  const gpu::Choice choice = gpu::parse_choice(o_.gpu).value_or(gpu::Choice::automatic);
  gpu::OpenOptions open;
  open.proc_root = o_.proc_root;
  open.smi_interval_ms = std::max<std::int64_t>(100, std::llround(o_.gpu_interval * 1000));
  gpu::Selection selection = gpu::open_backend(choice, open);
  if (selection.failed_request) {
    warn(selection.message);
  } else if (!selection.backend && choice == gpu::Choice::automatic) {
    // No GPU is the normal case on a CPU-only machine: kept in the trace, said only with -v.
    quiet_notes_.push_back(selection.message);
    if (o_.verbose) std::cerr << "qprof: " << selection.message << '\n';
  } else if (!o_.quiet && (selection.backend || o_.verbose)) {
    std::cerr << "qprof: " << selection.message << '\n';
  }
  if (!selection.backend) return;
  gpu_helpers_ = selection.backend->helper_pids();
  gpu::SamplerOptions options = gpu::SamplerOptions::from_environment();
  options.process_interval_ns = std::llround(o_.gpu_interval * kNs);
  gpu_ = std::make_unique<gpu::Sampler>(std::move(selection.backend), options);
}

void Session::gpu_sample(std::int64_t now, Seconds t) {
  if (!gpu_) return;
  gpu_->sample(now, t, tree_->pids(), *out_);
  gpu_sample_warnings();
}

void Session::gpu_sample_warnings() {
  if (gpu_->has_warnings()) {
    for (const std::string& w : gpu_->take_warnings()) warn(w);
  }
}

}  // namespace qprof::session_detail
