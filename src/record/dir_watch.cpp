// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/dir_watch.hpp"

#include <signal.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "qprof/record/dir_walk.hpp"

namespace qprof::record {
using trace::DirSample;

namespace {

std::chrono::steady_clock::time_point at_ns(std::int64_t mono_ns) {
  // monotonic_ns() and steady_clock are both CLOCK_MONOTONIC on Linux.
  return std::chrono::steady_clock::time_point(std::chrono::nanoseconds(mono_ns));
}

}  // namespace

DirWatcher::DirWatcher(std::vector<std::string> paths, Seconds interval, const WallAnchor& clock)
    : paths_(std::move(paths)),
      clock_(clock),
      asked_ns_(static_cast<std::int64_t>(interval * 1e9)),
      start_ns_(monotonic_ns()),
      thread_([this] { loop(); }) {
  {
    std::lock_guard<std::mutex> s(stats_mu_);
    stats_.asked_interval = interval;
  }
  std::unique_lock<std::mutex> lock(stop_mu_);
  cv_.wait(lock, [this] { return first_done_; });
}

DirWatcher::~DirWatcher() { stop(); }

void DirWatcher::stop() {
  {
    std::lock_guard<std::mutex> lock(stop_mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::vector<std::string> DirWatcher::take_warnings() {
  std::lock_guard<std::mutex> lock(warnings_mu_);
  warnings_pending_.store(false);
  return std::exchange(warnings_, {});
}

DirWatcher::Stats DirWatcher::stats() const {
  std::lock_guard<std::mutex> lock(stats_mu_);
  Stats s = stats_;
  const std::int64_t end = stopped_ns_ > 0 ? stopped_ns_ : monotonic_ns();
  s.watched = static_cast<double>(end - first_walk_ns_) * 1e-9;
  if (s.walks > 1)
    s.mean_interval = static_cast<double>(last_walk_ns_ - first_walk_ns_) * 1e-9 / static_cast<double>(s.walks - 1);
  return s;
}

void DirWatcher::loop() {
  // Signals belong to the sampler thread (its sleep is the one they must interrupt).
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, nullptr);
  walk_all();
  std::unique_lock<std::mutex> lock(stop_mu_);
  first_done_ = true;
  cv_.notify_all();
  // The earliest start of the next walk such that, once it ends (costing what the last one
  // did), the walks' CPU time is still within kCpuShare of the time since the first walk.
  const auto within_budget = [this] {
    std::lock_guard<std::mutex> s(stats_mu_);
    const double total = stats_.cpu_seconds, last = last_walk_cpu_;
    return first_walk_ns_ + static_cast<std::int64_t>(((total + last) / kCpuShare - last) * 1e9);
  };
  while (!stop_) {
    const std::int64_t next = std::max(last_walk_ns_ + asked_ns_, within_budget());
    cv_.wait_until(lock, at_ns(next), [this] { return stop_; });
    if (stop_) break;
    lock.unlock();
    walk_all();
    lock.lock();
  }
  lock.unlock();
  // The state at the end, when the budget allows one more walk.
  if (monotonic_ns() >= std::max(last_walk_ns_ + asked_ns_ / 10, within_budget())) walk_all();
  std::lock_guard<std::mutex> s(stats_mu_);
  stopped_ns_ = monotonic_ns();
}

void DirWatcher::walk_all() {
  const std::int64_t begin = monotonic_ns();
  const std::int64_t cpu0 = thread_cpu_ns();
  const Seconds t = clock_.unix_at(begin);
  std::vector<DirSample> samples;
  std::vector<std::string> problems;
  std::uint64_t entries = 0;
  for (std::size_t i = 0; i < paths_.size(); ++i) {
    const DirSize size = walk_dir(paths_[i]);
    entries += size.entries;
    samples.push_back({t, static_cast<int>(i), size.apparent, size.allocated, size.fs_free});
    for (const std::string& p : size.problems) {
      if (said_.insert(p).second)
        problems.push_back("--watch-dir " + paths_[i] + ": cannot read " + p + ": not counted");
    }
    if (size.more_problems > 0 && said_.insert(paths_[i] + " more").second) {
      problems.push_back("--watch-dir " + paths_[i] + ": " + std::to_string(size.more_problems) +
                         " more part(s) cannot be read: not counted");
    }
  }
  const double cost = static_cast<double>(thread_cpu_ns() - cpu0) * 1e-9;
  {
    std::lock_guard<std::mutex> lock(stats_mu_);
    if (stats_.walks == 0) {
      first_walk_ns_ = begin;
      stats_.first_walk_cpu = cost;
    }
    last_walk_ns_ = begin;
    ++stats_.walks;
    stats_.cpu_seconds += cost;
    last_walk_cpu_ = cost;
    stats_.last_entries = entries;
  }
  {
    std::lock_guard<std::mutex> lock(results_mu_);
    for (const DirSample& s : samples) results_[written_++ % results_.size()] = s;
    if (written_ - read_ > results_.size()) read_ = written_ - results_.size();
  }
  if (!problems.empty()) {
    std::lock_guard<std::mutex> lock(warnings_mu_);
    for (std::string& p : problems) warnings_.push_back(std::move(p));
    warnings_pending_.store(true);
  }
}

}  // namespace qprof::record
