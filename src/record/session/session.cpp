// SPDX-License-Identifier: Apache-2.0
// `qprof run` and `qprof attach`: the session coordinates the parts of a run (session/*.hpp),
// each of which owns its state. It opens the trace, starts or attaches to the command, writes
// the header, runs the schedule loop until the tree is done, and finishes the trace and report.
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <optional>

#include "attached.hpp"
#include "checkpoints.hpp"
#include "cpu_rate.hpp"
#include "end_figures.hpp"
#include "exit_tracker.hpp"
#include "gpu_sampling.hpp"
#include "live_view.hpp"
#include "marker_intake.hpp"
#include "memory_limit.hpp"
#include "notices.hpp"
#include "oom_watch.hpp"
#include "process_setup.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/common/version.hpp"
#include "qprof/common/proc_file.hpp"
#include "qprof/common/units.hpp"
#include "qprof/record/cgroup.hpp"
#include "qprof/record/cgroup_limit.hpp"
#include "qprof/record/group_leader.hpp"
#include "qprof/record/launcher.hpp"
#include "qprof/record/session.hpp"
#include "qprof/record/trace_output.hpp"
#include "schedule.hpp"
#include "trace_sink.hpp"
#include "unread_members.hpp"
#include "watched_dirs.hpp"

namespace qprof::record {
using trace::TraceMeta;

namespace session {
namespace {

// A swap device or file is on: /proc/swaps lists one below its heading.
bool machine_has_swap() {
  std::string swaps;
  return read_small_file("/proc/swaps", swaps) && swaps.find('\n') != std::string::npos &&
         swaps.find('\n') + 1 < swaps.size();
}

class Session {
 public:
  Session(const RunOptions& o, RunReport& r, const RunHooks& hooks)
      : o_(o),
        report_(r),
        hooks_(hooks),
        notices_(r.warnings, o.quiet, hooks.speaker),
        cpu_(o.stats_interval),
        dirs_(o.watch_dirs, o.watch_interval),
        intake_([thread = pthread_self()] { SignalRelay::wake(thread); }) {}
  int run();

 private:
  bool open_trace();  // a bad -o fails before the command runs
  // False where --mem cannot be had (report_.refusal says why).
  bool open_cgroup();
  bool impose_memory_limit(const std::string& why_not);
  // The clock's start, the tree (primed with qprof's children), the first walk of --watch-dir.
  void start_clock_and_tree();
  // Launches the command (or takes the attached process); its exit status when it cannot start.
  std::optional<int> start_command(TraceMeta& meta, const SignalRelay& signals, JobStderr& job_stderr);
  void write_header(TraceMeta& meta);
  void start_sampling(int stderr_pipe, MarkerMatcher matcher);
  // The schedule loop: samples on their deadlines, markers, reaps, signals, the timeout.
  void loop(SignalRelay& signals);
  void regular_sample(std::int64_t now);
  void stats_pass(std::int64_t now);
  void take_markers();
  void poll_oom(std::int64_t now, bool last = false);
  void finish_trace();
  SamplingReport sampling_report() const;

  const RunOptions& o_;
  RunReport& report_;
  const RunHooks& hooks_;
  Notices notices_;
  GpuSampling gpu_;
  MemoryLimitWatch limit_;
  UnreadMembers unread_;
  OomWatch oom_;
  std::optional<Bytes> last_tree_figure_;  // the last sample's footprint, else Σ RSS: what an OOM kill found
  CpuRate cpu_;
  SampleSpan samples_;
  std::unique_ptr<AttachedProcess> attached_;  // qprof attach: the process followed
  std::unique_ptr<TraceSink> trace_;
  std::unique_ptr<TreeCgroup> cgroup_;
  // Without --cgroup: qprof's own memory cgroup (the job's too), with its oom_kill when the run began.
  std::optional<MemoryCgroupDir> own_cgroup_;
  std::unique_ptr<WallAnchor> clock_;
  std::int64_t start_ns_ = 0;
  rlimit job_files_limit_{RLIM_INFINITY, RLIM_INFINITY};  // RLIMIT_NOFILE as qprof was started
  Bytes qprof_rss_at_launch_ = 0;
  WatchedDirs dirs_;  // gone before the clock, which its walks read until they stop
  std::unique_ptr<ProcTree> tree_;
  std::optional<GroupLeader> group_leader_;  // without a terminal: the command's group, not led by it
  std::optional<ExitTracker> exit_;
  std::optional<LiveView> live_;
  MarkerIntake intake_;  // gone before the live line, through which the tee writes
  std::unique_ptr<Sampler> sampler_;
  std::optional<Checkpoints> checkpoints_;
  std::optional<Schedule> schedule_;
};

int Session::run() {
  if (o_.attach) {
    attached_ = open_attached(*o_.attach, o_.proc_root, hooks_.speaker);
    if (!attached_) return 2;  // before anything is written
    report_.attached = true;
  }
  report_.command = display_command(attached_ ? attached_->argv() : o_.command);
  report_.sampling.asked_interval = o_.interval;
  report_.margin = o_.margin;
  Result<MarkerMatcher> matcher = o_.marker_regex ? MarkerMatcher::compile(*o_.marker_regex) : MarkerMatcher();
  if (!matcher) {
    hooks_.speaker.line("--marker-regex: " + terminal_text(matcher.failure().message));
    return 2;
  }
  if (!open_trace()) return 2;
  // Orphans of the tree (double-forked daemons) reparent to qprof instead of init.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  job_files_limit_ = raise_files_limit();
  SignalRelay signals;
  if (!open_cgroup()) {
    trace_->discard();
    return 2;
  }
  intake_.open_channel(notices_, o_.mark_fifo);
  std::optional<JobStderr> job_stderr = attached_ ? JobStderr{} : open_job_stderr(notices_, hooks_.speaker);
  if (!job_stderr) return 2;
  // Before the tree is primed: the smi backends start helpers that must be known as outsiders
  // (NVML, which starts none, opens beside the command instead).
  gpu_.open(o_, notices_);
  // Before the tree is primed too: the placeholder leading the command's group is an outsider.
  if (!attached_ && !has_controlling_terminal()) group_leader_.emplace();
  start_clock_and_tree();
  TraceMeta meta;
  if (const auto failed = start_command(meta, signals, *job_stderr)) return *failed;
  trace_->begin();
  report_.launched = true;
  write_header(meta);
  start_sampling(job_stderr->read, std::move(*matcher));
  loop(signals);
  live_->close();  // the terminal is whole again before the summary
  // With the tree gone, the pipe is at its end at once; a daemon left running may hold it open.
  intake_.stop(tree_->empty() ? 2000 : 100);
  take_markers();
  intake_.say_dropped_total(notices_);
  stats_pass(monotonic_ns());  // the final totals: everything the tree's processes used
  finish_trace();
  intake_.release_stderr();
  // Attached, the process's status is not qprof's to pass on (and often unknown): the summary
  // and the EXIT line tell it.
  return attached_ ? 0 : report_.exit.status;
}

bool Session::open_trace() {
  const Result<TraceOutput> opened = open_trace_output(o_.output, o_.identity, hooks_.speaker);
  if (!opened) {
    hooks_.speaker.line(opened.failure().message);
    return false;
  }
  const TraceOutput& output = *opened;
  report_.trace_path = output.path;
  report_.trace_readable_back = output.readable_back;
  if (output.read_fd >= 0) {
    report_.trace_read_fd = std::shared_ptr<const int>(new int(output.read_fd), [](const int* fd) {
      ::close(*fd);
      delete fd;
    });
  }
  trace_ = std::make_unique<TraceSink>(output, hooks_.on_trace_failed, hooks_.speaker);
  if (hooks_.on_trace_opened) hooks_.on_trace_opened(report_.trace_path);
  return true;
}

bool Session::open_cgroup() {
  if (o_.cgroup == CgroupMode::off || o_.attach) return true;
  std::string why_not;
  if (Result<std::unique_ptr<TreeCgroup>> created = TreeCgroup::create())
    cgroup_ = std::move(*created);
  else
    why_not = created.failure().message;
  if (o_.memory_limit) return impose_memory_limit(why_not);
  if (!cgroup_ && o_.cgroup == CgroupMode::on) {
    notices_.warn("--cgroup: cannot create a cgroup (" + why_not + "); following the tree through /proc instead");
  } else if (!cgroup_) {
    // --cgroup auto: where qprof may not create a group the footprint is Σ PSS, the normal case
    // for a user without delegation; said only when asked.
    const std::string note = "no cgroup of the tree's own (" + why_not + "): the footprint is Σ PSS";
    if (o_.verbose) hooks_.speaker.line(note);
    notices_.note_quietly(note);
  } else if (!cgroup_->has_memory()) {
    const std::string note =
        "the cgroup at " + cgroup_->path() + " has no memory controller: membership only, no cgroup charge";
    // Asked for (--cgroup on), it is a warning; by default (auto) the footprint is Σ PSS, the
    // normal case without a delegated memory controller, said only with -v.
    if (o_.cgroup == CgroupMode::on || o_.verbose) {
      notices_.warn("--cgroup: " + note);
    } else {
      notices_.note_quietly(note);
    }
  }
  return true;
}

bool Session::impose_memory_limit(const std::string& why_not) {
  const std::string asked = "--mem " + human_bytes(*o_.memory_limit);
  if (!cgroup_ || !cgroup_->has_memory()) {
    report_.refusal = asked + ": qprof cannot make a memory cgroup for the tree (" +
                      (cgroup_ ? cgroup_->path() + " has no memory controller" : why_not) +
                      "); run it as root, or in a delegated cgroup v2 subtree (systemd-run --user --scope -p "
                      "Delegate=yes qprof run --mem …)";
    return false;
  }
  const LimitWrite w = write_memory_limit(cgroup_->path(), cgroup_->is_v1(), *o_.memory_limit);
  if (!w.ok) {
    report_.refusal = asked + ": the limit could not be set (" + w.error + ")";
    return false;
  }
  if (!w.swap_limited && machine_has_swap()) {
    notices_.warn(asked + ": the kernel has no swap control for " + cgroup_->path() +
                  " (swap accounting is off): the tree may swap beyond the limit");
  }
  limit_ = MemoryLimitWatch(MemoryLimit{*o_.memory_limit, cgroup_->is_v1() ? "cgroup-v1" : "cgroup",
                                        "--mem: the tree's own cgroup " + cgroup_->path()});
  return true;
}

void Session::start_clock_and_tree() {
  // Attached, the tree is the process and its descendants, those that exist already included
  // (hence no prime): new processes join when their parent is the process or a member.
  tree_ = std::make_unique<ProcTree>(o_.proc_root, o_.attach ? *o_.attach : ::getpid());
  if (!cgroup_ && !o_.attach) tree_->prime();
  if (!cgroup_) own_cgroup_ = own_memory_cgroup();
  if (!o_.attach) oom_.open(cgroup_.get(), own_cgroup_, notices_);
  clock_ = std::make_unique<WallAnchor>();
  start_ns_ = clock_->mono0();
  report_.start = clock_->unix_at(start_ns_);
  qprof_rss_at_launch_ = own_peak_rss();
  dirs_.start(*clock_);
}

std::optional<int> Session::start_command(TraceMeta& meta, const SignalRelay& signals, JobStderr& job_stderr) {
  ExitTracker::Command command;
  command.attached = attached_ != nullptr;
  command.qprof_rss_at_launch = qprof_rss_at_launch_;
  if (attached_) {
    command.pid = attached_->pid();
    say_attached(command.pid, o_.quiet, intake_.channel(), hooks_.speaker);
    limit_.find(o_.proc_root, meta);
  } else {
    LaunchRequest request;
    request.argv = o_.command;
    request.stderr_fd = job_stderr.write;
    if (cgroup_) request.cgroup_procs = cgroup_->procs_path();
    request.default_signals = signals.changed_from_default();
    request.files_limit = job_files_limit_;
    request.own_process_group = command.own_process_group = group_leader_.has_value();
    request.process_group = group_leader_ && group_leader_->pid() > 0 ? group_leader_->pid() : 0;
    // The limit's /sys and /proc reads (a quarter of a millisecond) are made while the command
    // execs, instead of delaying the first sample after it.
    request.while_exec = [&] { limit_.find(o_.proc_root, meta); };
    request.on_note = [&](const std::string& note) {
      if (o_.verbose) hooks_.speaker.line(note);
    };
    intake_.let_command_inherit_channel(true);
    const auto launched = launch(request);
    intake_.let_command_inherit_channel(false);
    ::close(job_stderr.write);
    if (!launched) {
      ::close(job_stderr.read);
      trace_->discard();
      hooks_.speaker.line(launched.failure().message);
      return launched.failure().status;
    }
    command.pid = *launched;
    command.process_group = request.process_group > 0 ? request.process_group : command.pid;
  }
  exit_.emplace(command, o_.wait_daemons, Timeout(o_.timeout, o_.kill_grace, start_ns_, command.attached));
  return std::nullopt;
}

void Session::write_header(TraceMeta& meta) {
  meta.format_version = trace::kFormatVersion;
  meta.qprof_version = std::string(kVersion);
  meta.host = o_.identity.host.empty() ? host_name() : o_.identity.host;
  meta.job = o_.identity.job;
  meta.metric = o_.metric;
  meta.interval = o_.interval;
  meta.root_pid = exit_->pid();
  meta.start = report_.start;
  if (cgroup_) meta.other["cgroup"] = cgroup_->path();
  if (o_.attach) meta.other["attached"] = "1";  // not qprof's child: no stderr, no wait status
  trace::Writer& out = trace_->writer();
  out.header(meta);
  out.cmdline(report_.command);
  dirs_.write_definitions(out);
  notices_.write_to(out);
  trace_->flush();
}

void Session::start_sampling(int stderr_pipe, MarkerMatcher matcher) {
  live_ = LiveView::open(o_.quiet, o_.live, start_ns_);
  notices_.show_through(live_->line());
  intake_.start(stderr_pipe, std::move(matcher),
                live_->line() ? static_cast<TeeOutputGuard*>(live_->line()) : notices_.plain_stderr());
  tree_->add_root(exit_->pid());
  if (cgroup_) tree_->use_cgroup(cgroup_->procs_path());
  SamplerConfig config;
  config.page_size = static_cast<Bytes>(::sysconf(_SC_PAGESIZE));
  config.ticks_per_second = static_cast<double>(::sysconf(_SC_CLK_TCK));
  config.multiprocess = o_.multiprocess;
  if (o_.record_pss || o_.metric != "rss") config.pss_interval = o_.pss_interval;
  config.proc_root = o_.proc_root;
  config.own_tree = !o_.attach;
  sampler_ = std::make_unique<Sampler>(*tree_, trace_->writer(), *clock_, std::move(config), cgroup_.get());
  // Attached, CPU time and I/O count from now, not from the process's start.
  if (o_.attach) sampler_->count_from_now();
  // The tree's CPU time is 0 at the start (attached: at the attach), so the CPU rate's intervals
  // cover the whole run, the CPU time before the first stats pass included.
  cpu_.add(clock_->unix_at(start_ns_), 0.0);
  checkpoints_.emplace(Checkpoints::Parts{*sampler_, *clock_, *tree_, gpu_, *trace_, *live_}, hooks_,
                       [this](std::int64_t now) { stats_pass(now); });
}

void Session::loop(SignalRelay& signals) {
  Schedule& schedule = schedule_.emplace(o_.interval, o_.stats_interval, start_ns_);
  trace_->start_cadence(start_ns_);
  while (true) {
    std::int64_t now = monotonic_ns();
    if (schedule.sample_due(now)) {
      regular_sample(now);
      schedule.sample_taken(monotonic_ns());
    }
    if (schedule.stats_due(now)) {
      stats_pass(now);
      schedule.stats_taken(monotonic_ns());
    }
    take_markers();
    if (signals.take_child_event()) exit_->reap(*sampler_, gpu_.helpers());
    if (attached_) exit_->watch_attached(*attached_, *sampler_, *tree_);
    exit_->relay_signals(signals, *tree_, notices_);
    if (exit_->job_control(signals, *live_, *trace_)) {
      // Continued after a stop: the schedule starts again from now, and the time stopped is no
      // deadline missed.
      schedule.restart(monotonic_ns());
      continue;
    }
    if (exit_->finished(tree_->empty())) break;
    now = monotonic_ns();
    exit_->enforce_timeout(now, *tree_, notices_);
    std::int64_t wake_at = schedule.next();
    if (const auto deadline = exit_->next_deadline()) wake_at = std::min(wake_at, *deadline);
    trace_->flush_if_due(now, wake_at);
    sleep_until_ns(wake_at);
  }
}

void Session::regular_sample(std::int64_t now) {
  poll_oom(now);  // before the sample: a victim not yet pruned is still named, with its last reading
  const auto s = sampler_->sample(now);
  unread_.update(tree_->unread(), notices_);
  if (!s) return;
  limit_.check(s->bytes, notices_, sampler_->footprint_now());
  gpu_.sample(now, s->t, *tree_, trace_->writer(), notices_);
  samples_.taken(s->t);
  last_tree_figure_ = sampler_->footprint_now().value_or(s->bytes);
  live_->set_footprint(sampler_->footprint_now(), sampler_->footprint_peak());
  live_->show(now, s->bytes, sampler_->peak().bytes, gpu_.tree_total());
}

void Session::stats_pass(std::int64_t now) {
  sampler_->sample_stats(now);
  dirs_.drain(trace_->writer(), notices_);
  if (const auto percent = cpu_.add(clock_->unix_at(now), sampler_->totals().cpu_seconds)) {
    live_->set_cpu_percent(*percent);
  }
}

void Session::poll_oom(std::int64_t now, bool last) {
  for (const ExitTracker::Killed& k : exit_->take_sigkilled()) oom_.killed_member(k.pid, k.maxrss);
  const OomWatch::Now at{*tree_,        exit_->pid(),      *clock_,
                         now,           last_tree_figure_, [this](Seconds t) { return checkpoints_->stage_at(t); },
                         limit_.bytes()};
  oom_.poll(at, trace_->writer(), notices_, last);
}

void Session::take_markers() {
  intake_.say_drops(notices_);
  checkpoints_->take(intake_.inbox(), notices_);
}

void Session::finish_trace() {
  trace::Writer& out = trace_->writer();
  report_.watch = dirs_.finish(out, notices_);
  const Seconds t_end = clock_->unix_at(monotonic_ns());
  report_.duration = t_end - report_.start;
  report_.stages = checkpoints_->finish(notices_);
  if (sampler_->count() > 0) report_.sampled_peak = sampler_->peak();
  unread_.finish(tree_->unread(), notices_, out);
  report_.sampling = sampling_report();
  cpu_.finish();
  report_.limit = limit_.report();
  // From wait4 of the tree's processes rather than RUSAGE_CHILDREN, which would also count the
  // GPU backends' helpers.
  if (exit_->kernel_peak() > 0) {
    report_.kernel_process_peak = exit_->kernel_peak();
    out.peak(trace::kPeakKernelProcess, exit_->kernel_peak());
  }
  report_.gpu = gpu_.finish(notices_);
  if (!attached_) {
    // The last kills: a victim's log line may come after its tree was gone.
    poll_oom(monotonic_ns(), true);
    report_.oom_events = oom_.kills();
  }
  record_tree_figures(TreeSources{*sampler_, cgroup_.get(), own_cgroup_, o_.interval, cpu_.peak(), o_.stats_interval},
                      out, notices_, report_);
  const std::string name = attached_ ? "process " + std::to_string(exit_->pid()) : o_.command.front();
  report_.exit = record_exit(*exit_, name, t_end, out, report_, hooks_.speaker);
  trace_->close();
  report_.trace_error = trace_->error();
  // Another process that truncated the file meanwhile leaves a hole where the start was: the
  // trace then starts with NUL bytes, which no writer of qprof's puts there.
  char first = 1;
  if (report_.trace_error.empty() && report_.trace_read_fd && ::pread(*report_.trace_read_fd, &first, 1, 0) == 1 &&
      first == '\0') {
    report_.trace_error =
        report_.trace_path + ": cut by another process while qprof wrote it (it starts with NUL bytes)";
  }
  if (!report_.trace_error.empty()) report_.warnings.push_back(report_.trace_error + ": the trace is incomplete");
}

SamplingReport Session::sampling_report() const {
  SamplingReport r;
  r.asked_interval = o_.interval;
  r.samples = samples_.count();
  r.marker_samples = checkpoints_->samples();
  r.missed_deadlines = schedule_->missed();
  r.stops = exit_->stops();
  r.stopped_seconds = exit_->stopped_seconds();
  r.mean_interval = samples_.mean_interval(exit_->stopped_seconds());
  r.unread_members = unread_.count();
  return r;
}

}  // namespace
}  // namespace session

int run_profiled(const RunOptions& options, RunReport* report, const RunHooks& hooks) {
  RunReport local;
  session::Session session(options, report ? *report : local, hooks);
  return session.run();
}

}  // namespace qprof::record
