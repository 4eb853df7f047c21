// SPDX-License-Identifier: Apache-2.0
// What a reduced reader keeps of one sampled series: the records that the figures over the run and
// over its stages are read from, whatever the series' length. Of each value (a key) the highest
// record, the earliest of equal ones, over the whole series and inside each window; the latest
// record at or before each point; the first and the latest record; the record before each highest
// kept. The kept records, in file order, give every such figure exactly as the whole series does.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "qprof/common/types.hpp"

namespace qprof::trace::detail {

// Windows (inclusive, slack included) and points, shared by every series of one reading.
struct KeepPlan {
  struct Window {
    Seconds lo = 0, hi = 0;
  };
  std::vector<Window> windows;  // sorted by lo
  std::vector<Seconds> points;  // sorted: the latest record with t <= point is kept
};

template <typename S, std::size_t K>
class SeriesKeeper {
 public:
  using Keys = std::array<Bytes, K>;

  explicit SeriesKeeper(const KeepPlan& plan) : plan_(&plan) {}

  void add(const S& s, const Keys& keys) {
    if (next_seq_ == 0) {  // a series the trace never has costs nothing per stage
      in_window_.resize(plan_->windows.size());
      at_point_.assign(plan_->points.size(), kNone);
    }
    const std::uint64_t seq = next_seq_++;
    if (seq > 0 && s.t < latest_.t) unsorted_ = true;
    // The points this record is past take the record before it.
    while (next_point_ < plan_->points.size() && s.t > plan_->points[next_point_]) {
      if (seq > 0) hold(latest_seq_, latest_);
      at_point_[next_point_++] = seq > 0 ? latest_seq_ : kNone;
    }
    if (seq == 0) hold(seq, s);
    for (std::size_t j = 0; j < K; ++j) consider(best_[j], seq, s, keys[j]);
    while (next_window_ < plan_->windows.size() && plan_->windows[next_window_].lo <= s.t) {
      active_.push_back(next_window_++);
    }
    std::erase_if(active_, [&](std::size_t w) { return plan_->windows[w].hi < s.t; });
    for (std::size_t w : active_) {
      for (std::size_t j = 0; j < K; ++j) consider(in_window_[w][j], seq, s, keys[j]);
    }
    latest_ = s;
    latest_seq_ = seq;
    if (pool_.size() > compact_at_) compact();
  }

  bool empty() const { return next_seq_ == 0; }
  std::uint64_t count() const { return next_seq_; }
  // A record earlier than the one before it (a clock set back): the windows and points, which
  // assume time order, may then have missed records.
  bool unsorted() const { return unsorted_; }

  std::vector<S> kept() const {
    std::vector<S> out;
    if (empty()) return out;
    std::vector<std::uint64_t> seqs = referenced();
    std::sort(seqs.begin(), seqs.end());
    seqs.erase(std::unique(seqs.begin(), seqs.end()), seqs.end());
    for (std::uint64_t q : seqs) out.push_back(q == latest_seq_ ? latest_ : pool_.at(q));
    return out;
  }

 private:
  static constexpr std::uint64_t kNone = ~std::uint64_t{0};
  struct Best {
    std::uint64_t seq = kNone;
    Bytes key = 0;
    // The record before it: where a count only rises (the kernel's high-water mark), what the
    // series held before the highest was reached, which bounds when (a job's floor, job.cpp).
    std::uint64_t before = kNone;
  };

  void hold(std::uint64_t seq, const S& s) { pool_.try_emplace(seq, s); }

  void consider(Best& b, std::uint64_t seq, const S& s, Bytes key) {
    if (b.seq != kNone && key <= b.key) return;
    b = {seq, key, seq > 0 ? latest_seq_ : kNone};
    hold(seq, s);
    if (seq > 0) hold(latest_seq_, latest_);
  }

  std::vector<std::uint64_t> referenced() const {
    std::vector<std::uint64_t> out{0, latest_seq_};
    for (const Best& b : best_) out.insert(out.end(), {b.seq, b.before});
    for (const auto& keys : in_window_) {
      for (const Best& b : keys) out.insert(out.end(), {b.seq, b.before});
    }
    out.insert(out.end(), at_point_.begin(), at_point_.end());
    std::erase(out, kNone);
    return out;
  }

  // Drops the records no figure points at any more; the next pass comes once as many again were
  // held, so that its cost is spread over them.
  void compact() {
    std::vector<std::uint64_t> keep = referenced();
    std::unordered_map<std::uint64_t, S> kept;
    for (std::uint64_t q : keep) {
      if (const auto it = pool_.find(q); it != pool_.end()) kept.emplace(q, it->second);
    }
    pool_.swap(kept);
    compact_at_ = 2 * keep.size() + 64;
  }

  const KeepPlan* plan_;
  std::uint64_t next_seq_ = 0;
  bool unsorted_ = false;
  S latest_{};
  std::uint64_t latest_seq_ = 0;
  std::array<Best, K> best_{};
  std::vector<std::array<Best, K>> in_window_;
  std::vector<std::uint64_t> at_point_;
  std::size_t next_point_ = 0, next_window_ = 0;
  std::vector<std::size_t> active_;
  std::unordered_map<std::uint64_t, S> pool_;
  std::size_t compact_at_ = 64;
};

}  // namespace qprof::trace::detail
