// SPDX-License-Identifier: Apache-2.0
// Each rank's series from its own reader thread, through a queue of a few blocks, merged by time.
#include "sum_walk.hpp"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

#include "qprof/analysis/timeline.hpp"
#include "series_scan.hpp"

namespace qprof::analysis::detail {
using trace::MemSample;
using trace::Trace;

namespace {
// A block of a rank's events: its reader parses ahead of the merge by at most kBlocks of them,
// which bounds the memory whatever the trace's length.
constexpr std::size_t kBlockEvents = 4096;
constexpr std::size_t kBlocks = 2;
}  // namespace

// One rank's events, made by a reader thread and taken by the merge in order.
class RankStream {
 public:
  RankStream(const Trace& t, Metric m, Seconds offset) : reader_([this, &t, m, offset] { read(t, m, offset); }) {}
  ~RankStream() {
    {
      std::lock_guard lock(mutex_);
      abandoned_ = true;  // the reader drops the rest of its events instead of waiting
    }
    changed_.notify_all();
    reader_.join();
  }

  // The next event; false at the stream's end.
  bool next(RankEvent& e) {
    if (at_ == taken_.size()) {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return !blocks_.empty() || done_; });
      if (blocks_.empty()) {
        if (failure_) std::rethrow_exception(failure_);
        return false;
      }
      taken_ = std::move(blocks_.front());
      blocks_.pop_front();
      at_ = 0;
      changed_.notify_all();
    }
    e = taken_[at_++];
    return true;
  }

 private:
  void read(const Trace& t, Metric m, Seconds offset) {
    std::vector<RankEvent> block;
    block.reserve(kBlockEvents);
    try {
      bool any = false;
      Seconds last = 0;
      scan_series(t, {m}, [&](std::size_t, const MemSample& s) {
        block.push_back({s.t - offset, s.bytes});
        any = true;
        last = s.t;
        if (block.size() == kBlockEvents) hand_over(block);
      });
      // After its end the trace's tree is gone: it holds nothing.
      if (any) {
        const Seconds end = std::max(trace_end(t), last) - offset;
        block.push_back({std::nextafter(end, std::numeric_limits<Seconds>::infinity()), 0});
      }
      if (!block.empty()) hand_over(block);
    } catch (...) {
      std::lock_guard lock(mutex_);
      failure_ = std::current_exception();
    }
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    changed_.notify_all();
  }

  void hand_over(std::vector<RankEvent>& block) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return blocks_.size() < kBlocks || abandoned_; });
    if (!abandoned_) blocks_.push_back(std::move(block));
    lock.unlock();
    changed_.notify_all();
    block.clear();
    block.reserve(kBlockEvents);
  }

  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::vector<RankEvent>> blocks_;
  bool done_ = false, abandoned_ = false;
  std::exception_ptr failure_;
  std::vector<RankEvent> taken_;
  std::size_t at_ = 0;
  std::thread reader_;  // last: it starts once the members above are made
};

bool all_reduced(const std::vector<const Trace*>& traces) {
  return std::all_of(traces.begin(), traces.end(), [](const Trace* t) { return t->reduced.has_value(); });
}

SumWalk::SumWalk(const std::vector<const Trace*>& traces, Metric m, Align align)
    : head_(traces.size()), has_head_(traces.size(), false), current_(traces.size(), 0) {
  const JobClock clock = job_clock(traces, align);
  streams_.reserve(traces.size());
  for (std::size_t i = 0; i < traces.size(); ++i) {
    streams_.push_back(std::make_unique<RankStream>(*traces[i], m, clock.offset[i]));
  }
  for (std::size_t i = 0; i < traces.size(); ++i) has_head_[i] = streams_[i]->next(head_[i]);
}

SumWalk::~SumWalk() = default;

// The earliest head, the lowest trace index among equal times (walk_series' stable sort).
bool SumWalk::pop(std::size_t& trace, RankEvent& e) {
  std::size_t best = head_.size();
  for (std::size_t i = 0; i < head_.size(); ++i) {
    if (has_head_[i] && (best == head_.size() || head_[i].t < head_[best].t)) best = i;
  }
  if (best == head_.size()) return false;
  trace = best;
  e = head_[best];
  has_head_[best] = streams_[best]->next(head_[best]);
  return true;
}

bool SumWalk::next(Seconds& t, Bytes& sum) {
  std::size_t i = 0;
  RankEvent e{};
  if (!pop(i, e)) return false;
  for (;;) {
    sum_ = sum_ - current_[i] + e.bytes;
    current_[i] = e.bytes;
    // The step ends where the next event has another time (every head is at e.t or later).
    bool same = false;
    for (std::size_t k = 0; k < head_.size() && !same; ++k) same = has_head_[k] && head_[k].t == e.t;
    if (!same) break;
    pop(i, e);
  }
  t = e.t;
  sum = sum_;
  return true;
}

}  // namespace qprof::analysis::detail
