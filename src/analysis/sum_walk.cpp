// SPDX-License-Identifier: Apache-2.0
// Each rank's series from its file, merged by time: from a reader thread of its own for the few
// ranks of a node, a piece at a time on the merging thread for more.
#include "sum_walk.hpp"

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <deque>
#include <exception>
#include <limits>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

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
// Up to this many ranks each have a reader thread (parsing on every core); more are read a piece
// at a time on the merging thread, so that neither threads (a limit on processes ended qprof),
// nor open files, nor memory (a 1 MiB line buffer and up to 4 blocks of 64 KiB a thread) grow with them.
constexpr std::size_t kThreadedRanks = 8;

// After its end the trace's tree is gone: it holds nothing.
RankEvent end_of(const Trace& t, Seconds last, Seconds offset) {
  const Seconds end = std::max(trace_end(t), last) - offset;
  return {std::nextafter(end, std::numeric_limits<Seconds>::infinity()), 0};
}

// The earliest event first, of equal times the lowest trace index (walk_series' stable sort).
bool later(const std::pair<Seconds, std::size_t>& a, const std::pair<Seconds, std::size_t>& b) {
  return a.first > b.first || (a.first == b.first && a.second > b.second);
}
}  // namespace

// One rank's events, taken by the merge in order.
class RankStream {
 public:
  virtual ~RankStream() = default;
  // The next event; false at the stream's end.
  virtual bool next(RankEvent& e) = 0;
};

namespace {

// Made by a reader thread ahead of the merge.
class ThreadedRank : public RankStream {
 public:
  ThreadedRank(const Trace& t, Metric m, Seconds offset) : reader_([this, &t, m, offset] { read(t, m, offset); }) {}
  ~ThreadedRank() override {
    {
      std::lock_guard lock(mutex_);
      abandoned_ = true;  // the reader drops the rest of its events instead of waiting
    }
    changed_.notify_all();
    reader_.join();
  }

  bool next(RankEvent& e) override {
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
      if (any) block.push_back(end_of(t, last, offset));
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

// Read a piece of its file at a time when the merge has taken every event of the piece before.
class PulledRank : public RankStream {
 public:
  PulledRank(const Trace& t, Metric m, Seconds offset)
      : trace_(t), offset_(offset), pieces_(t, m, [this](const MemSample& s) {
          events_.push_back({s.t - offset_, s.bytes});
          last_ = s.t;
        }) {}

  bool next(RankEvent& e) override {
    while (at_ == events_.size()) {
      if (ended_) return false;
      events_.clear();
      at_ = 0;
      ended_ = !pieces_.next();
      if (ended_ && last_) events_.push_back(end_of(trace_, *last_, offset_));
    }
    e = events_[at_++];
    return true;
  }

 private:
  const Trace& trace_;
  Seconds offset_;
  std::vector<RankEvent> events_;
  std::size_t at_ = 0;
  std::optional<Seconds> last_;
  bool ended_ = false;
  SeriesPieces pieces_;  // last: its sink writes the members above
};

std::unique_ptr<RankStream> rank_stream(const Trace& t, Metric m, Seconds offset, bool thread) {
  if (thread) {
    try {
      return std::make_unique<ThreadedRank>(t, m, offset);
    } catch (const std::system_error&) {
      // No thread to be had (a limit on processes, memory): read on the merging thread.
    }
  }
  return std::make_unique<PulledRank>(t, m, offset);
}

}  // namespace

bool all_reduced(const std::vector<const Trace*>& traces) {
  return std::all_of(traces.begin(), traces.end(), [](const Trace* t) { return t->reduced.has_value(); });
}

SumWalk::SumWalk(const std::vector<const Trace*>& traces, Metric m, Align align)
    : head_(traces.size()), current_(traces.size(), 0) {
  const JobClock clock = job_clock(traces, align);
  const bool threads = traces.size() <= kThreadedRanks;
  streams_.reserve(traces.size());
  for (std::size_t i = 0; i < traces.size(); ++i)
    streams_.push_back(rank_stream(*traces[i], m, clock.offset[i], threads));
  for (std::size_t i = 0; i < traces.size(); ++i) {
    if (streams_[i]->next(head_[i])) heap_.push_back({head_[i].t, i});
  }
  std::make_heap(heap_.begin(), heap_.end(), later);
}

SumWalk::~SumWalk() = default;

// The earliest head, the lowest trace index among equal times (walk_series' stable sort).
bool SumWalk::pop(std::size_t& trace, RankEvent& e) {
  if (heap_.empty()) return false;
  std::pop_heap(heap_.begin(), heap_.end(), later);
  trace = heap_.back().second;
  heap_.pop_back();
  e = head_[trace];
  if (streams_[trace]->next(head_[trace])) {
    heap_.push_back({head_[trace].t, trace});
    std::push_heap(heap_.begin(), heap_.end(), later);
  }
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
    if (heap_.empty() || heap_.front().first != e.t) break;
    pop(i, e);
  }
  t = e.t;
  sum = sum_;
  return true;
}

}  // namespace qprof::analysis::detail
