// SPDX-License-Identifier: Apache-2.0
// `--watch-dir`: the size of watched directories over time, on a thread of its own. A walk costs
// time in proportion to the files (about a microsecond each), so walks run every `interval` but
// never so often that their CPU time, over the run, passes kCpuShare of one core.
#pragma once

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "qprof/common/clock.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof::record {

class DirWatcher {
 public:
  static constexpr double kCpuShare = 0.02;  // of one core, walks' CPU time over the watch's time

  // Starts the thread and returns once the first walk (the baseline of every growth) is done.
  DirWatcher(std::vector<std::string> paths, Seconds interval, const WallAnchor& clock);
  ~DirWatcher();  // stops (see stop())
  DirWatcher(const DirWatcher&) = delete;
  DirWatcher& operator=(const DirWatcher&) = delete;

  // One more walk when the budget allows it (the state at the end), then the thread ends.
  void stop();

  // Walks finished since the last call, oldest first, one DirSample per directory:
  // `f(const DirSample&)`. Never waits for a walk in progress.
  template <typename F>
  void drain(F&& f) {
    std::lock_guard<std::mutex> lock(results_mu_);
    while (read_ != written_) f(results_[read_++ % results_.size()]);
  }
  // Problems met since the last call (a directory that cannot be read), each said once.
  bool has_warnings() const { return warnings_pending_.load(); }
  std::vector<std::string> take_warnings();

  struct Stats {
    std::uint64_t walks = 0;
    double cpu_seconds = 0;  // the walks' own CPU time (CLOCK_THREAD_CPUTIME_ID)
    Seconds watched = 0;     // from the first walk's start to now (or to the stop)
    Seconds asked_interval = 0;
    Seconds mean_interval = 0;       // between walk starts, as achieved
    Seconds first_walk_cpu = 0;      // the baseline walk, before the command starts: outside the budget
    std::uint64_t last_entries = 0;  // entries visited by the last walk, all directories
    double cpu_share() const { return watched > 0 ? cpu_seconds / watched : 0.0; }
  };
  Stats stats() const;

 private:
  void loop();
  void walk_all();

  const std::vector<std::string> paths_;
  const WallAnchor& clock_;
  const std::int64_t asked_ns_;
  const std::int64_t start_ns_;

  std::mutex results_mu_;
  std::array<trace::DirSample, 1024> results_{};  // a ring: the oldest results give way if nobody drains
  std::uint64_t read_ = 0, written_ = 0;

  std::mutex warnings_mu_;
  std::vector<std::string> warnings_;
  std::set<std::string> said_;  // thread only: problems already said
  std::atomic<bool> warnings_pending_{false};

  mutable std::mutex stats_mu_;
  Stats stats_;
  std::int64_t first_walk_ns_ = 0, last_walk_ns_ = 0, stopped_ns_ = 0;  // guarded by stats_mu_
  double last_walk_cpu_ = 0;

  std::mutex stop_mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool first_done_ = false;
  std::thread thread_;
};

}  // namespace qprof::record
