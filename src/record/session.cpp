#include "qprof/record/session.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <algorithm>
#include <cmath>
#include <ctime>
#include <iostream>
#include <memory>
#include <mutex>
#include <thread>

#include "qprof/record/cgroup.hpp"
#include "qprof/common/clock.hpp"
#include "qprof/trace/format.hpp"
#include "qprof/gpu/backend.hpp"
#include "qprof/gpu/sampler.hpp"
#include "qprof/record/launcher.hpp"
#include "qprof/record/markers.hpp"
#include "qprof/record/proc_tree.hpp"
#include "qprof/record/sampler.hpp"
#include "qprof/record/signal_relay.hpp"
#include "qprof/record/stderr_tee.hpp"
#include "qprof/record/summary.hpp"
#include "qprof/common/units.hpp"
#include "qprof/common/version.hpp"

namespace qprof {
namespace {

constexpr std::int64_t kNs = 1000000000;
constexpr std::int64_t kFlushEveryNs = 100 * 1000000;  // the most a sample waits in the buffer

// Markers travel from the tee thread to the sampler thread, which samples at once.
struct MarkerInbox {
  std::mutex mu;
  std::vector<std::string> labels;
  std::atomic<std::uint64_t> posted{0};
  std::atomic<std::uint64_t> taken{0};
  std::atomic<bool> loop_ended{false};  // then markers wait for the final take, not for a wake-up
};

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

Bytes self_peak_rss() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<Bytes>(ru.ru_maxrss) * 1024;
}

class Session {
 public:
  Session(const RunOptions& o, RunReport& r, const RunHooks& hooks) : o_(o), report_(r), hooks_(hooks) {}
  int run();

 private:
  void post_marker(std::string label);
  void take_markers();
  void regular_sample(std::int64_t now);
  void stats_sample(std::int64_t now);
  void gpu_sample(std::int64_t now, Seconds t);
  void gpu_sample_warnings();
  void open_gpu();
  void finish_gpu();
  void reap();
  void relay_signals();
  void enforce_timeout(std::int64_t now);
  void signal_tree(int sig);
  bool finished() const;
  void warn(const std::string& text);
  void finish_trace();

  const RunOptions& o_;
  RunReport& report_;
  const RunHooks& hooks_;
  std::unique_ptr<dat::Writer> out_;
  std::unique_ptr<TreeCgroup> cgroup_;
  std::unique_ptr<WallAnchor> clock_;
  std::unique_ptr<ProcTree> tree_;
  std::unique_ptr<Sampler> sampler_;
  std::unique_ptr<gpu::Sampler> gpu_;
  std::vector<pid_t> gpu_helpers_;  // qprof's children that are not the tree's
  StageTracker stages_;
  MarkerInbox inbox_;
  pthread_t sampler_thread_ = pthread_self();
  SignalRelay* signals_ = nullptr;

  pid_t cmd_pid_ = -1;
  bool cmd_exited_ = false;
  int cmd_status_ = 0;
  bool stop_waiting_ = false;  // interrupted while only daemons were left
  std::int64_t start_ns_ = 0;
  std::int64_t last_flush_ns_ = 0;
  std::int64_t kill_at_ns_ = -1;
  bool killed_ = false;
  std::int64_t next_stats_ns_ = 0;
  std::int64_t stats_period_ns_ = 0;
  std::optional<CpuSample> last_cpu_;
  Seconds first_regular_t_ = 0;
  Seconds last_regular_t_ = 0;
  Bytes self_rss_at_launch_ = 0;
  Bytes kernel_peak_ = 0;  // the largest ru_maxrss of the tree's processes qprof reaped
  bool header_written_ = false;  // warnings before the header wait for it
};

void Session::warn(const std::string& text) {
  std::cerr << "qprof: " << text << '\n';
  report_.warnings.push_back(text);
  if (header_written_) out_->note(text);
}

void Session::post_marker(std::string label) {
  std::uint64_t seq;
  {
    std::lock_guard<std::mutex> lock(inbox_.mu);
    inbox_.labels.push_back(std::move(label));
    seq = ++inbox_.posted;
  }
  // The wake-up can land just before the sampler goes to sleep and be lost; send it again until
  // the marker is taken (bounded: the regular schedule takes it anyway).
  for (int attempt = 0; attempt < 50 && inbox_.taken.load() < seq && !inbox_.loop_ended.load(); ++attempt) {
    SignalRelay::wake(sampler_thread_);
    for (int i = 0; i < 5 && inbox_.taken.load() < seq; ++i) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
}

void Session::take_markers() {
  if (inbox_.taken.load() == inbox_.posted.load()) return;
  std::vector<std::string> labels;
  {
    std::lock_guard<std::mutex> lock(inbox_.mu);
    labels.swap(inbox_.labels);
  }
  for (std::string& label : labels) {
    const std::int64_t now = monotonic_ns();
    const auto s = sampler_->sample(now);
    const Seconds t = clock_->unix_at(now);
    if (s) {
      ++report_.marker_samples;
      if (gpu_) {
        gpu_->sample_checkpoint(now, t, tree_->members(), *out_);
        gpu_sample_warnings();
      }
    }
    stats_sample(now);
    Marker marker{t, std::move(label), {}};
    marker.at.rss = s ? s->bytes : sampler_->last().bytes;
    if (const auto pss = sampler_->latest_pss()) {
      marker.at.pss = pss->pss;
      marker.at.uss = pss->uss;
    }
    marker.at.read_bytes = sampler_->totals().io.read_bytes;
    marker.at.write_bytes = sampler_->totals().io.write_bytes;
    marker.at.cpu_seconds = sampler_->totals().cpu_seconds;
    if (gpu_) marker.at.gpu_tree = gpu_->last_tree_total();
    out_->mark(t, marker.label);
    if (auto stage = stages_.on_marker(marker.label, t, *marker.at.rss)) {
      out_->func(stage->name, {stage->t_start, stage->mem_start}, {stage->t_end, stage->mem_end});
    }
    out_->flush();
    last_flush_ns_ = monotonic_ns();
    if (hooks_.on_checkpoint) hooks_.on_checkpoint(marker);
    ++inbox_.taken;
  }
}

void Session::regular_sample(std::int64_t now) {
  const auto s = sampler_->sample(now);
  if (!s) return;
  gpu_sample(now, s->t);
  if (report_.samples == 0) first_regular_t_ = s->t;
  last_regular_t_ = s->t;
  ++report_.samples;
}

void Session::stats_sample(std::int64_t now) {
  sampler_->sample_stats(now);
  const CpuSample cpu{clock_->unix_at(now), sampler_->totals().cpu_seconds};
  if (last_cpu_ && cpu.t - last_cpu_->t >= 0.5 * o_.stats_interval) {
    const double percent = 100.0 * (cpu.cpu_seconds - last_cpu_->cpu_seconds) / (cpu.t - last_cpu_->t);
    report_.cpu_peak_percent = std::max(report_.cpu_peak_percent, percent);
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
  if (selection.failed_request) warn(selection.message);
  else if (!o_.quiet) std::cerr << "qprof: " << selection.message << '\n';
  if (!selection.backend) return;
  gpu_helpers_ = selection.backend->helper_pids();
  gpu::SamplerOptions options = gpu::SamplerOptions::from_environment();
  options.process_interval_ns = std::llround(o_.gpu_interval * kNs);
  gpu_ = std::make_unique<gpu::Sampler>(std::move(selection.backend), options);
}

void Session::gpu_sample(std::int64_t now, Seconds t) {
  if (!gpu_) return;
  gpu_->sample(now, t, tree_->members(), *out_);
  gpu_sample_warnings();
}

void Session::gpu_sample_warnings() {
  if (gpu_->has_warnings()) {
    for (const std::string& w : gpu_->take_warnings()) warn(w);
  }
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
                                  human_bytes(d.peak_used) + " of " + human_bytes(d.total));
  }
}

void Session::reap() {
  // Peek first (WNOWAIT): a zombie's I/O counters still read, and must be kept before the
  // reap hands them to qprof, which is not part of the tree.
  while (true) {
    siginfo_t info{};
    if (::waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) break;
    const pid_t pid = info.si_pid;
    int status = 0;
    rusage usage{};
    if (std::find(gpu_helpers_.begin(), gpu_helpers_.end(), pid) != gpu_helpers_.end()) {
      ::wait4(pid, &status, 0, &usage);  // a GPU backend's helper that died: not the tree's
      continue;
    }
    sampler_->before_reap(pid);
    if (::wait4(pid, &status, 0, &usage) != pid) break;
    sampler_->after_reap(pid, usage);
    // The kernel's peak of the largest single process, its waited-for descendants included.
    // The command's own figure counts its pre-exec copy of qprof: no larger than qprof itself,
    // it says nothing about the command.
    const Bytes peak = static_cast<Bytes>(usage.ru_maxrss) * 1024;
    if (pid != cmd_pid_ || peak > self_rss_at_launch_) kernel_peak_ = std::max(kernel_peak_, peak);
    if (pid == cmd_pid_) {
      cmd_status_ = status;
      cmd_exited_ = true;
    }
  }
  sampler_->prune();
}

void Session::signal_tree(int sig) {
  for (const Member& m : tree_->members()) ::kill(m.pid, sig);
}

void Session::relay_signals() {
  SignalRelay::Received r;
  while (signals_->take_forwarded(r)) {
    if (!cmd_exited_) {
      // A key pressed at the terminal reached the whole foreground process group, the command
      // included: sending it again would deliver it twice.
      const bool command_got_it = r.from_terminal && ::getpgid(cmd_pid_) == ::getpgrp();
      if (!command_got_it) ::kill(cmd_pid_, r.sig);
    } else if (!stop_waiting_) {
      stop_waiting_ = true;
      warn(signal_name(r.sig) + " while waiting for " + std::to_string(tree_->members().size()) +
           " process(es) that outlived the command; stopping, they keep running");
    }
  }
}

void Session::enforce_timeout(std::int64_t now) {
  if (!o_.timeout || killed_ || (cmd_exited_ && !o_.wait_daemons)) return;
  const std::int64_t timeout_ns = start_ns_ + static_cast<std::int64_t>(*o_.timeout * kNs);
  if (kill_at_ns_ < 0 && now >= timeout_ns) {
    report_.timed_out = true;
    const std::size_t n = tree_->members().size();
    signal_tree(SIGTERM);
    kill_at_ns_ = now + static_cast<std::int64_t>(o_.kill_grace * kNs);
    warn("timeout after " + human_seconds(*o_.timeout) + ": sent SIGTERM to " + std::to_string(n) +
         " process(es) of the tree");
  } else if (kill_at_ns_ >= 0 && now >= kill_at_ns_) {
    killed_ = true;
    const std::size_t n = tree_->members().size();
    if (n > 0) {
      signal_tree(SIGKILL);
      warn(std::to_string(n) + " process(es) outlived the " + human_seconds(o_.kill_grace) +
           " grace period: sent SIGKILL");
    }
  }
}

bool Session::finished() const {
  if (!cmd_exited_) return false;
  return !o_.wait_daemons || stop_waiting_ || tree_->empty();
}

void Session::finish_trace() {
  const Seconds t_end = clock_->unix_at(monotonic_ns());
  report_.duration = t_end - report_.start;
  for (const Stage& s : stages_.unclosed(sampler_->last().t, sampler_->last().bytes)) {
    warn("stage '" + s.name + "' was started but never ended");
  }
  if (sampler_->count() > 0) report_.sampled_peak = sampler_->peak();
  if (report_.samples > 1) {
    report_.mean_interval = (last_regular_t_ - first_regular_t_) / static_cast<double>(report_.samples - 1);
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
  }
  const TreeAccounting::Totals& totals = sampler_->totals();
  report_.hwm_sum = totals.hwm_sum;
  out_->peak(dat::kPeakHwmSum, totals.hwm_sum);
  report_.cpu_seconds = totals.cpu_seconds;
  report_.io = totals.io;
  report_.pss_peak = sampler_->peak_pss();
  if (report_.pss_peak) report_.uss_peak = sampler_->peak_uss();
  if (const PssSampler* pss = sampler_->pss_sampler()) report_.pss_interval = pss->interval();
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

  const ExitDescription exit = describe_wait_status(cmd_status_, o_.command.front());
  report_.exit_status = exit.exit_status;
  report_.signal = exit.signal;
  out_->exit(ExitInfo{t_end, exit.exit_status, exit.signal, report_.timed_out});
  if (!exit.message.empty()) std::cerr << exit.message << '\n';
  out_->flush();
  if (!out_->error().empty()) {
    std::cerr << "qprof: " << out_->error() << '\n';
    report_.warnings.push_back(out_->error());
  }
}

int Session::run() {
  report_.trace_path = o_.output.empty() ? default_trace_name() : o_.output;
  report_.command = display_command(o_.command);
  report_.asked_interval = o_.interval;
  MarkerMatcher matcher = o_.marker_regex ? MarkerMatcher(*o_.marker_regex) : MarkerMatcher();

  // The trace file first: a bad -o must fail before the command runs.
  try {
    out_ = std::make_unique<dat::Writer>(report_.trace_path);
  } catch (const std::system_error& e) {
    std::cerr << "qprof: " << e.what() << '\n';
    return 2;
  }
  // Orphans of the tree (double-forked daemons) reparent to qprof instead of init.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  // Every member keeps a few /proc files open: allow as many descriptors as the hard limit.
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
  }
  SignalRelay signals;
  signals_ = &signals;

  if (o_.cgroup) {
    std::string why_not;
    cgroup_ = TreeCgroup::create(why_not);
    if (!cgroup_) {
      warn("--cgroup: cannot create a cgroup (" + why_not + "); following the tree through /proc instead");
    } else if (!cgroup_->has_memory()) {
      warn("--cgroup: the cgroup at " + cgroup_->path() +
           " has no memory controller: membership only, no exact tree peak");
    }
  }

  int pipe_fds[2];
  if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    std::cerr << "qprof: pipe: " << std::strerror(errno) << '\n';
    return 2;
  }
  // Before the tree is primed: the smi backends start helpers that must be known as outsiders.
  open_gpu();
  tree_ = std::make_unique<ProcTree>(o_.proc_root, ::getpid());
  if (!cgroup_) tree_->prime();
  clock_ = std::make_unique<WallAnchor>();
  start_ns_ = clock_->mono0();
  report_.start = clock_->unix_at(start_ns_);
  self_rss_at_launch_ = self_peak_rss();

  LaunchRequest request;
  request.argv = o_.command;
  request.stderr_fd = pipe_fds[1];
  if (cgroup_) request.cgroup_procs = cgroup_->procs_path();
  request.default_signals = signals.changed_from_default();
  const auto launched = launch(request);
  ::close(pipe_fds[1]);
  if (const auto* failure = std::get_if<LaunchFailure>(&launched)) {
    ::close(pipe_fds[0]);
    out_.reset();
    ::unlink(report_.trace_path.c_str());
    std::cerr << failure->message << '\n';
    return failure->exit_status;
  }
  cmd_pid_ = std::get<pid_t>(launched);
  report_.launched = true;

  TraceMeta meta;
  meta.format_version = dat::kFormatVersion;
  meta.qprof_version = std::string(kVersion);
  meta.host = host_name();
  meta.metric = o_.metric;
  meta.interval = o_.interval;
  meta.root_pid = cmd_pid_;
  meta.start = report_.start;
  if (cgroup_) meta.other["cgroup"] = cgroup_->path();
  out_->header(meta);
  out_->cmdline(report_.command);
  for (const std::string& w : report_.warnings) out_->note(w);
  header_written_ = true;
  out_->flush();

  // The tee first: a marker printed at once must find its sample taken at once.
  StderrTee tee(pipe_fds[0], STDERR_FILENO, std::move(matcher),
                [this](std::string label) { post_marker(std::move(label)); });
  tee.start();
  tree_->add_root(cmd_pid_);
  if (cgroup_) tree_->use_cgroup(cgroup_->procs_path());
  SamplerConfig config;
  config.page_size = static_cast<Bytes>(::sysconf(_SC_PAGESIZE));
  config.ticks_per_second = static_cast<double>(::sysconf(_SC_CLK_TCK));
  config.multiprocess = o_.multiprocess;
  if (o_.metric != "rss") config.pss_interval = o_.pss_interval;
  config.proc_root = o_.proc_root;
  sampler_ = std::make_unique<Sampler>(*tree_, *out_, *clock_, std::move(config), cgroup_.get());

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
    if (signals.take_child_event()) reap();
    relay_signals();
    if (finished()) break;
    now = monotonic_ns();
    enforce_timeout(now);

    std::int64_t wake_at = std::min(next, next_stats_ns_);
    if (o_.timeout && kill_at_ns_ < 0) wake_at = std::min(wake_at, start_ns_ + static_cast<std::int64_t>(*o_.timeout * kNs));
    if (kill_at_ns_ >= 0 && !killed_) wake_at = std::min(wake_at, kill_at_ns_);
    if (now - last_flush_ns_ >= kFlushEveryNs || wake_at - now >= kFlushEveryNs) {
      out_->flush();
      last_flush_ns_ = now;
    }
    sleep_until_ns(wake_at);
  }

  // With the tree gone, the pipe is at its end at once; a daemon left running may hold it open.
  inbox_.loop_ended = true;
  tee.finish(tree_->empty() ? 2000 : 100);
  take_markers();
  stats_sample(monotonic_ns());  // the final totals: everything the tree's processes used
  finish_trace();
  signals_ = nullptr;
  return report_.exit_status;
}

}  // namespace

int run_profiled(const RunOptions& options, RunReport* report, const RunHooks& hooks) {
  RunReport local;
  Session session(options, report ? *report : local, hooks);
  const int status = session.run();
  const RunReport& r = report ? *report : local;
  if (!options.quiet && r.launched) std::cerr << format_summary(r);
  return status;
}

std::string default_trace_name() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char buf[64];
  std::strftime(buf, sizeof buf, "qprof_%Y%m%d%H%M%S.dat", &local);
  return buf;
}

}  // namespace qprof
