// SPDX-License-Identifier: Apache-2.0
// A cumulative counter (CPU seconds, bytes read) as a rate per second over its last interval, for
// both exports. An interval shorter than analysis::kMinRateInterval (the extra sample at the exit,
// at a marker) would be noise of the kernel's 10 ms ticks: it is merged into the next, as report's
// rates merge them.
#pragma once

#include <optional>

#include "qprof/analysis/bottleneck.hpp"

namespace qprof::exports {

class CounterRate {
 public:
  // The reading at `t`; the rate over the interval it closes, nullopt where it closes none (the
  // first reading, or one too soon after the last).
  std::optional<double> add(double t, double value) {
    if (!have_) {
      have_ = true;
      t_ = t;
      v_ = value;
      return std::nullopt;
    }
    if (t - t_ < analysis::kMinRateInterval) return std::nullopt;
    rate_ = (value - v_) / (t - t_);
    t_ = t;
    v_ = value;
    return rate_;
  }
  std::optional<double> rate() const { return rate_; }  // over the last interval closed

 private:
  bool have_ = false;
  double t_ = 0, v_ = 0;
  std::optional<double> rate_;
};

}  // namespace qprof::exports
