// SPDX-License-Identifier: Apache-2.0
// PSS and USS of the tree from /proc/PID/smaps_rollup, on a thread and a schedule of their own:
// a read walks the target's page tables under its mmap lock (≈2.8 ms per GB here), so it must
// neither delay the RSS samples nor run more often than its own cost allows.
#pragma once

#include <sys/types.h>

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "qprof/common/clock.hpp"
#include "qprof/common/proc_file.hpp"
#include "qprof/record/proc_tree.hpp"

namespace qprof::record {

class PssSampler {
 public:
  // A pass over the tree costs `c` of CPU: the next one starts no sooner than max(interval, c × this).
  static constexpr double kCostFactor = 20.0;  // at most 5 % of the time spent walking
  // The least time between passes asked for by new highs of Σ RSS: a tenth of the time since the
  // first pass, from kFirstRiseSpacing to kRiseSpacing. A job of a fraction of a second reaches
  // its peak within the first 100 ms; a long one is not walked that often for its growth.
  static constexpr std::chrono::milliseconds kFirstRiseSpacing{10};
  static constexpr std::chrono::milliseconds kRiseSpacing{100};
  static std::chrono::nanoseconds rise_spacing(std::chrono::nanoseconds since_first_pass);

  PssSampler(std::string proc_root, Seconds interval, const WallAnchor& clock);
  ~PssSampler();
  PssSampler(const PssSampler&) = delete;
  PssSampler& operator=(const PssSampler&) = delete;

  // From the sampler thread, when membership changed.
  void set_members(const std::vector<Member>& members);
  // Passes finished since the last call, oldest first; `f(const PssSample&)`. Never blocks on
  // a pass in progress.
  template <typename F>
  void drain(F&& f) {
    std::lock_guard<std::mutex> lock(results_mu_);
    while (read_ != written_) f(results_[read_++ % results_.size()]);
  }

  // From the sampler thread, at a marker: asks for a pass now and waits for it, at most `budget`;
  // not asked at all when the last pass cost more than the budget. True when a pass that started
  // after the call finished in time (drain() then has it).
  bool pass_now(Seconds budget);

  // From the sampler thread, when the tree's Σ RSS reached a new high: a pass as soon as the cost
  // budget allows (sooner than the schedule's next one), without waiting for it.
  void rise();

  Seconds interval() const { return interval_ns_.load() * 1e-9; }  // as adapted
  std::uint64_t passes() const { return passes_.load(); }
  // Of those, the passes taken early for a new Σ RSS high.
  std::uint64_t rise_passes() const {
    std::lock_guard<std::mutex> lock(stop_mu_);
    return rise_passes_;
  }

 private:
  struct Target {
    pid_t pid;
    std::uint64_t start_ticks;
    ProcFile rollup;
  };
  void loop();
  void pass();

  std::string proc_root_;
  const WallAnchor& clock_;
  const std::int64_t asked_ns_;
  std::atomic<std::int64_t> interval_ns_;
  std::atomic<std::uint64_t> passes_{0};

  std::mutex members_mu_;
  std::vector<std::pair<pid_t, std::uint64_t>> members_;  // guarded by members_mu_
  std::uint64_t members_version_ = 0;                     // guarded by members_mu_
  std::uint64_t seen_version_ = 0;                        // thread only
  std::vector<Target> targets_;                           // thread only

  std::mutex results_mu_;
  std::array<trace::PssSample, 256> results_{};  // a ring: the oldest results give way if nobody drains
  std::uint64_t read_ = 0, written_ = 0;

  mutable std::mutex stop_mu_;
  std::condition_variable stop_cv_;
  bool stop_ = false;
  std::uint64_t wanted_ = 0, done_ = 0;  // passes asked for by pass_now, and served; guarded by stop_mu_
  bool rise_asked_ = false;              // guarded by stop_mu_
  std::uint64_t rise_passes_ = 0;        // guarded by stop_mu_
  std::condition_variable done_cv_;
  std::atomic<std::int64_t> last_cost_ns_{0};
  std::thread thread_;
};

}  // namespace qprof::record
