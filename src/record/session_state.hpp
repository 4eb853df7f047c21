// The state of one `qprof run` and its jobs, private to record/: session.cpp starts the run,
// session_loop.cpp holds the schedule loop and the sampling, session_markers.cpp the marker
// intake, session_reap.cpp reaping, signals and the timeout, session_finish.cpp the end of the
// trace and the report's figures.
#pragma once

#include <sys/resource.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "qprof/common/clock.hpp"
#include "qprof/gpu/sampler.hpp"
#include "qprof/record/attach.hpp"
#include "qprof/record/cgroup.hpp"
#include "qprof/record/mark_channel.hpp"
#include "qprof/record/live_line.hpp"
#include "qprof/record/dir_watch.hpp"
#include "qprof/record/proc_tree.hpp"
#include "qprof/record/sampler.hpp"
#include "qprof/record/session.hpp"
#include "qprof/record/signal_relay.hpp"
#include "qprof/trace/format.hpp"
#include "qprof/trace/stages.hpp"

namespace qprof::session_detail {

inline constexpr std::int64_t kNs = 1000000000;
inline constexpr std::int64_t kFlushEveryNs = 100 * 1000000;  // the most a sample waits in the buffer

// Markers travel from the tee thread and the marker channel's thread to the sampler thread,
// which samples at once, in the order they arrived.
struct MarkerInbox {
  std::mutex mu;
  std::vector<PendingMarker> items;
  std::atomic<std::uint64_t> posted{0};
  std::atomic<std::uint64_t> taken{0};
  std::atomic<bool> loop_ended{false};  // then markers wait for the final take, not for a wake-up
};

class Session {
 public:
  Session(const RunOptions& o, RunReport& r, const RunHooks& hooks) : o_(o), report_(r), hooks_(hooks) {}
  int run();

 private:
  // Said on stderr, kept for the summary and, once the header is written, in the trace.
  void warn(const std::string& text);
  // Writes the buffered lines out; the first failure is said at once (then nothing more is
  // written and the command goes on, sampled into memory only).
  void flush_trace();
  bool trace_intact() const { return report_.trace_error.empty(); }
  // Members whose /proc files could not be opened: said once, counted (session_loop.cpp).
  void check_unread_members();
  // The schedule loop: samples on their deadlines, markers, reaps, signals, the timeout.
  void loop();

  // Marker intake (session_markers.cpp).
  void post_marker(std::string label);
  void take_markers();
  // The marker channel (session_markers.cpp): created and exported before the command starts;
  // its markers queue without blocking its reader, up to a bound.
  void open_channel();
  bool post_channel_marker(PendingMarker marker);
  void channel_notes();
  // Sampling (session_loop.cpp).
  void regular_sample(std::int64_t now);
  void stats_sample(std::int64_t now);
  void gpu_sample(std::int64_t now, Seconds t);
  void gpu_sample_warnings();
  void open_gpu();
  // Reaping, signals and the exit bookkeeping (session_reap.cpp).
  void reap();
  void relay_signals();
  // Ctrl-Z and fg/bg (session_job_control.cpp); true when qprof was stopped or continued.
  bool job_control();
  void enforce_timeout(std::int64_t now);
  void signal_tree(int sig);
  bool finished() const;
  // qprof attach (session_attach.cpp): checks the process before anything is written, starts
  // following it in place of the launch, and notices its exit.
  bool open_attached();
  void start_attached();
  void watch_attached();
  // The live line's next frame (session_loop.cpp).
  void show_live(std::int64_t now, const MemSample& s);
  // The end of the trace and of the report (session_finish.cpp).
  void finish_trace();
  void finish_gpu();
  // The memory limit and --watch-dir (session_watch.cpp).
  void find_limit(TraceMeta& meta);
  void check_limit(Bytes tree_rss);
  void start_watch();       // before the launch: the first walk is every growth's baseline
  void write_watch_defs();  // after the header
  void drain_watch();
  void finish_watch();

  const RunOptions& o_;
  RunReport& report_;
  const RunHooks& hooks_;
  std::unique_ptr<dat::Writer> out_;
  std::unique_ptr<TreeCgroup> cgroup_;
  // Without --cgroup: qprof's own memory cgroup (the job's too), with its oom_kill when the run began.
  std::optional<MemoryCgroupDir> own_cgroup_;
  std::unique_ptr<WallAnchor> clock_;
  std::unique_ptr<ProcTree> tree_;
  std::unique_ptr<Sampler> sampler_;
  std::unique_ptr<gpu::Sampler> gpu_;
  std::unique_ptr<DirWatcher> dir_watch_;
  std::vector<pid_t> gpu_helpers_;  // qprof's children that are not the tree's
  StageTracker stages_;
  MarkerInbox inbox_;
  std::unique_ptr<MarkChannel> channel_;
  std::uint64_t channel_dropped_noted_ = 0;
  pthread_t sampler_thread_ = pthread_self();
  SignalRelay* signals_ = nullptr;

  std::unique_ptr<AttachedProcess> attached_;  // qprof attach: the process followed
  std::unique_ptr<LiveLine> live_;             // at a terminal, unless -q or --no-live
  std::string live_stage_;                     // the latest marker's label, for the live line
  std::optional<double> live_cpu_percent_;     // over the latest stats interval
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
  std::vector<std::string> quiet_notes_;  // NOTE lines not said on stderr (no GPU found), for the header
  // Without a controlling terminal (CI, services) the command gets a process group of its own;
  // with one it stays in qprof's, so that job control and the terminal's keys work as before.
  bool own_process_group_ = false;
  rlimit job_files_limit_{RLIM_INFINITY, RLIM_INFINITY};  // RLIMIT_NOFILE as qprof was started
};

}  // namespace qprof::session_detail
