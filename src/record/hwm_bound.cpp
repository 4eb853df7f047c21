// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/hwm_bound.hpp"

#include <algorithm>

namespace qprof::record {

HwmBound::Range HwmBound::add(Window from, Bytes bound, bool pending) {
  // Never read: it may have joined in the window before and left unseen there.
  if (from == kNever) from = window_ > 0 ? window_ - 1 : 0;
  Range r;
  r.from = std::min(from, window_);
  r.to = window_;
  if (window_ - r.from > kRecent) {
    // Older windows' sums are gone: the bound itself grows by what they would have.
    r.beyond = true;
    r.from = window_ - kRecent;
    best_ += bound;
  }
  for (Window w = r.from; w <= r.to; ++w) raise(w, bound, pending, false);
  return r;
}

void HwmBound::raise(Window w, Bytes delta, bool pending, bool settling) {
  if (w == window_) {
    departed_now_ += delta;
    if (pending) ++pending_now_;
    if (settling) --pending_now_;
    return;
  }
  auto it = open_.find(w);
  if (it == open_.end()) {
    if (window_ - w > kRecent) {  // settling a window that is no longer kept
      best_ += delta;
      return;
    }
    if (!pending) {
      Bytes& sum = recent_[w % kRecent];
      sum += delta;
      best_ = std::max(best_, sum);
      return;
    }
    it = open_.emplace(w, Open{recent_[w % kRecent], 0}).first;
  }
  Open& o = it->second;
  o.sum += delta;
  if (window_ - w <= kRecent) recent_[w % kRecent] = o.sum;
  best_ = std::max(best_, o.sum);
  if (pending) ++o.pending;
  if (settling && --o.pending == 0) open_.erase(it);
}

HwmBound::Range HwmBound::departed(Window from, Bytes bound) { return add(from, bound, false); }

HwmBound::Range HwmBound::departed_pending(Window from, Bytes bound) { return add(from, bound, true); }

void HwmBound::settle(const Range& r, Bytes delta) {
  if (r.beyond) best_ += delta;
  for (Window w = r.from; w <= r.to; ++w) raise(w, delta, false, true);
}

Bytes HwmBound::close(Bytes alive_sum) {
  const Bytes sum = alive_sum + departed_now_;
  recent_[window_ % kRecent] = sum;
  if (pending_now_ > 0) open_[window_] = Open{sum, pending_now_};
  best_ = std::max(best_, sum);
  ++window_;
  departed_now_ = 0;
  pending_now_ = 0;
  return best_;
}

}  // namespace qprof::record
