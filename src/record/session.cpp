#include "session_state.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <optional>

#include "qprof/common/version.hpp"
#include "qprof/record/launcher.hpp"
#include "qprof/record/markers.hpp"
#include "qprof/record/pty.hpp"
#include "qprof/record/stderr_tee.hpp"
#include "qprof/record/summary.hpp"
#include "qprof/record/trace_output.hpp"

namespace qprof {
namespace session_detail {
namespace {

std::string host_name() {
  char buf[256] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

bool has_controlling_terminal() {
  const int fd = ::open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

Bytes self_peak_rss() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<Bytes>(ru.ru_maxrss) * 1024;
}

}  // namespace

void Session::warn(const std::string& text) {
  if (live_) live_->message("qprof: " + text);  // above the live line, never through it
  else std::cerr << "qprof: " << text << '\n';
  report_.warnings.push_back(text);
  if (header_written_) out_->note(text);
}

void Session::flush_trace() {
  if (out_->flush() || !trace_intact()) return;
  report_.trace_error = out_->error();
  std::cerr << "qprof: " << report_.trace_error
            << ": the trace is incomplete from here on; the command goes on, sampled into memory only\n";
  if (hooks_.on_trace_failed) hooks_.on_trace_failed();
}

int Session::run() {
  // An attached process that cannot be followed fails before anything is written.
  if (o_.attach && !open_attached()) return 2;
  report_.command = display_command(o_.attach ? attached_->argv() : o_.command);
  report_.asked_interval = o_.interval;
  MarkerMatcher matcher = o_.marker_regex ? MarkerMatcher(*o_.marker_regex) : MarkerMatcher();

  // The trace file first: a bad -o must fail before the command runs.
  try {
    TraceOutput output = open_trace_output(o_.output, o_.identity);
    report_.trace_path = output.path;
    report_.trace_readable_back = output.readable_back;
    out_ = std::make_unique<dat::Writer>(output.fd, output.path);
  } catch (const TraceOutputError& e) {
    std::cerr << "qprof: " << e.what() << '\n';
    return 2;
  }
  if (hooks_.on_trace_opened) hooks_.on_trace_opened(report_.trace_path);
  // Orphans of the tree (double-forked daemons) reparent to qprof instead of init.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  // Every member keeps a few /proc files open: qprof allows itself as many descriptors as the
  // hard limit; the command gets back the limit qprof was started with.
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0) {
    job_files_limit_ = files;
    if (files.rlim_cur < files.rlim_max) {
      files.rlim_cur = files.rlim_max;
      ::setrlimit(RLIMIT_NOFILE, &files);
    }
  }
  SignalRelay signals;
  signals_ = &signals;

  if (o_.cgroup != CgroupMode::off && !o_.attach) {
    std::string why_not;
    cgroup_ = TreeCgroup::create(why_not);
    if (!cgroup_ && o_.cgroup == CgroupMode::on) {
      warn("--cgroup: cannot create a cgroup (" + why_not + "); following the tree through /proc instead");
    } else if (!cgroup_) {
      // --cgroup auto: the footprint falls back to Σ PSS, which is normal where qprof has no
      // right to create groups: said only when asked.
      const std::string note = "no cgroup of the tree's own (" + why_not + "): the footprint is Σ PSS";
      quiet_notes_.push_back(note);
      if (o_.verbose) std::cerr << "qprof: " << note << '\n';
    } else if (!cgroup_->has_memory()) {
      warn("--cgroup: the cgroup at " + cgroup_->path() +
           " has no memory controller: membership only, no cgroup charge");
    }
  }

  open_channel();
  int pipe_fds[2] = {-1, -1};
  // At a terminal the job's stderr is a pty of qprof's, so that it is a terminal in the job too.
  std::unique_ptr<StderrPty> pty;
  if (!o_.attach && ::isatty(STDERR_FILENO)) {
    std::string why_not;
    pty = StderrPty::open_like(STDERR_FILENO, why_not);
    if (!pty) warn("the command's stderr is a pipe, not a terminal (" + why_not + ")");
  }
  if (pty) {
    pipe_fds[0] = pty->take_master();
    pipe_fds[1] = pty->take_slave();
  } else if (!o_.attach && ::pipe2(pipe_fds, O_CLOEXEC) != 0) {
    std::cerr << "qprof: pipe: " << std::strerror(errno) << '\n';
    return 2;
  }
  // Before the tree is primed: the smi backends start helpers that must be known as outsiders.
  open_gpu();
  // Attached, the tree is the process and its descendants, those that exist already included
  // (hence no prime): new processes join when their parent is the process or a member.
  tree_ = std::make_unique<ProcTree>(o_.proc_root, o_.attach ? *o_.attach : ::getpid());
  if (!cgroup_ && !o_.attach) tree_->prime();
  if (!cgroup_) own_cgroup_ = own_memory_cgroup();
  clock_ = std::make_unique<WallAnchor>();
  start_ns_ = clock_->mono0();
  report_.start = clock_->unix_at(start_ns_);
  self_rss_at_launch_ = self_peak_rss();
  start_watch();

  TraceMeta meta;
  if (o_.attach) {
    start_attached();
    find_limit(meta);
  } else {
    LaunchRequest request;
    request.argv = o_.command;
    request.stderr_fd = pipe_fds[1];
    if (cgroup_) request.cgroup_procs = cgroup_->procs_path();
    request.default_signals = signals.changed_from_default();
    request.files_limit = job_files_limit_;
    request.own_process_group = own_process_group_ = !has_controlling_terminal();
    // The limit's /sys and /proc reads (a quarter of a millisecond) are made while the command
    // execs, instead of delaying the first sample after it.
    request.while_exec = [&] { find_limit(meta); };
    // The channel's write end is inherited by the command alone (close-on-exec again after).
    if (channel_) ::fcntl(channel_->write_fd(), F_SETFD, 0);
    const auto launched = launch(request);
    if (channel_) ::fcntl(channel_->write_fd(), F_SETFD, FD_CLOEXEC);
    ::close(pipe_fds[1]);
    if (const auto* failure = std::get_if<LaunchFailure>(&launched)) {
      ::close(pipe_fds[0]);
      out_.reset();
      if (report_.trace_readable_back) ::unlink(report_.trace_path.c_str());
      std::cerr << failure->message << '\n';
      return failure->exit_status;
    }
    cmd_pid_ = std::get<pid_t>(launched);
  }
  report_.launched = true;

  meta.format_version = dat::kFormatVersion;
  meta.qprof_version = std::string(kVersion);
  meta.host = o_.identity.host.empty() ? host_name() : o_.identity.host;
  meta.job = o_.identity.job;
  meta.metric = o_.metric;
  meta.interval = o_.interval;
  meta.root_pid = cmd_pid_;
  meta.start = report_.start;
  if (cgroup_) meta.other["cgroup"] = cgroup_->path();
  if (o_.attach) meta.other["attached"] = "1";  // not qprof's child: no stderr, no wait status
  out_->header(meta);
  out_->cmdline(report_.command);
  write_watch_defs();
  for (const std::string& w : report_.warnings) out_->note(w);
  for (const std::string& n : quiet_notes_) out_->note(n);
  header_written_ = true;
  flush_trace();

  // The tee first: a marker printed at once must find its sample taken at once.
  if (LiveLine::wanted(STDERR_FILENO, o_.quiet, o_.live)) live_ = std::make_unique<LiveLine>(STDERR_FILENO);
  std::optional<StderrTee> tee;
  if (!o_.attach) {
    tee.emplace(pipe_fds[0], STDERR_FILENO, std::move(matcher), [this](std::string label) { post_marker(std::move(label)); });
    tee->guard_output(live_.get());
    tee->start();
  }
  if (channel_) {
    channel_->start([this](PendingMarker m) { return post_channel_marker(std::move(m)); },
                    [this] { return inbox_.taken.load() < inbox_.posted.load(); },
                    [this] { SignalRelay::wake(sampler_thread_); });
  }
  tree_->add_root(cmd_pid_);
  if (cgroup_) tree_->use_cgroup(cgroup_->procs_path());
  SamplerConfig config;
  config.page_size = static_cast<Bytes>(::sysconf(_SC_PAGESIZE));
  config.ticks_per_second = static_cast<double>(::sysconf(_SC_CLK_TCK));
  config.multiprocess = o_.multiprocess;
  if (o_.record_pss || o_.metric != "rss") config.pss_interval = o_.pss_interval;
  config.proc_root = o_.proc_root;
  sampler_ = std::make_unique<Sampler>(*tree_, *out_, *clock_, std::move(config), cgroup_.get());
  // Attached, CPU time and I/O count from now, not from the process's start.
  if (o_.attach) sampler_->count_from_now();

  loop();
  if (live_) live_->close();  // the terminal is whole again before the summary

  // With the tree gone, the pipe is at its end at once; a daemon left running may hold it open.
  inbox_.loop_ended = true;
  if (tee) tee->finish(tree_->empty() ? 2000 : 100);
  if (channel_) channel_->finish();  // never waits for an end: daemons may hold the write end
  take_markers();
  if (channel_ && channel_->dropped() > 0) {
    warn("the marker channel dropped " + std::to_string(channel_->dropped()) + " markers (flooded)");
  }
  stats_sample(monotonic_ns());  // the final totals: everything the tree's processes used
  finish_trace();
  signals_ = nullptr;
  // Attached, the process's status is not qprof's to pass on (and often unknown): the summary
  // and the EXIT line tell it.
  return attached_ ? 0 : report_.exit_status;
}

}  // namespace session_detail

int run_profiled(const RunOptions& options, RunReport* report, const RunHooks& hooks) {
  RunReport local;
  session_detail::Session session(options, report ? *report : local, hooks);
  const int status = session.run();
  const RunReport& r = report ? *report : local;
  if (!options.quiet && r.launched) std::cerr << format_summary(r);
  return status;
}

}  // namespace qprof
