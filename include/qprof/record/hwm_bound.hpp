// SPDX-License-Identifier: Apache-2.0
// An upper bound of the tree's peak Σ RSS from its processes' high-water marks that sums only
// processes alive together. Time is cut into windows, one per stats pass; a window's sum holds
// every process alive at its end (its VmHWM read in that pass) and every process that left
// during it, or that left after its last reading (with a bound of its peak: its wait4 ru_maxrss,
// or an ancestor's, which may come later). Any moment lies in a window, and every process alive
// then is in that window's sum with at least its RSS then, so the largest window sum bounds the
// peak. Summing every process that ever lived instead counted a 300 MiB job that ran 5 short
// subprocesses six times over: each child's mark starts at its parent's size when it forks.
#pragma once

#include <sys/types.h>

#include <array>
#include <cstdint>
#include <map>

#include "qprof/trace/trace.hpp"

namespace qprof::record {

class HwmBound {
 public:
  using Window = std::uint64_t;
  static constexpr Window kNever = ~Window{0};

  Window current() const { return window_; }
  // A process that left: it counts with `bound` in windows [from, current]. `from` is the
  // window after its last reading (kNever: never read, so the window before this one too).
  // Returns the range it was counted in, for raise().
  struct Range {
    Window from = 0, to = 0;
    bool beyond = false;  // part of the range was too old to keep: raise() adds to the bound itself
  };
  Range departed(Window from, Bytes bound);
  // A departed process whose bound is not final yet: its windows stay open until settle().
  Range departed_pending(Window from, Bytes bound);
  // Its final bound arrived: `delta` more in each window of `r`, which closes for it.
  void settle(const Range& r, Bytes delta);
  // Ends the current window with the alive members' Σ VmHWM; the bound so far.
  Bytes close(Bytes alive_sum);
  Bytes bound() const { return best_; }

 private:
  static constexpr Window kRecent = 16;  // closed windows whose sums are kept for late departures
  Range add(Window from, Bytes bound, bool pending);
  void raise(Window w, Bytes delta, bool pending, bool settling);

  struct Open {
    Bytes sum = 0;
    std::size_t pending = 0;
  };
  Window window_ = 0;
  Bytes departed_now_ = 0;               // the current window's departures
  std::size_t pending_now_ = 0;          // of which not final yet
  std::array<Bytes, kRecent> recent_{};  // sums of the closed windows window_-1 … window_-kRecent
  std::map<Window, Open> open_;          // closed windows that wait for a pending bound
  Bytes best_ = 0;                       // the largest window sum so far
};

}  // namespace qprof::record
