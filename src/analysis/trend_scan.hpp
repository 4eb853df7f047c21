// SPDX-License-Identifier: Apache-2.0
// A trend (trend.hpp) fitted from a series that is passed over three times rather than held: the
// sums of fit_line, in the same order, so the same figures to the last bit whether the samples
// come from a vector or from a file read again (a reduced trace, trace::read_trace_reduced).
#pragma once

#include <cstddef>
#include <optional>

#include "qprof/analysis/trend.hpp"

namespace qprof::analysis::detail {

class TrendScan {
 public:
  static constexpr int kPasses = 3;

  // The window [lo, hi] in seconds since t0, as trend_of trims it.
  TrendScan(Seconds t0, Seconds lo, Seconds hi) : t0_(t0), lo_(lo), hi_(hi) {}
  Seconds lo() const { return lo_; }
  Seconds hi() const { return hi_; }
  Seconds t0() const { return t0_; }

  // Every sample of the series in its order, once in each pass; a pass ends with end_pass.
  void add(int pass, const trace::MemSample& s);
  void end_pass(int pass);
  // Whether another pass can change the result (a window with too few samples needs none).
  bool wants(int pass) const;
  std::optional<Trend> result(const TrendRule& rule) const;

 private:
  struct Sums {
    std::size_t n = 0;
    double sx = 0, sy = 0;    // pass 0 (the halves: pass 1)
    double mx = 0, my = 0;    // their means
    double sxx = 0, sxy = 0;  // centred, the pass after
    double slope() const { return sxy / sxx; }
    bool fits() const { return n >= 2 && sxx != 0; }
  };

  Seconds t0_, lo_, hi_;
  bool finite_ = true;
  Sums all_, early_, late_;
  Seconds first_ = 0, last_ = 0, middle_ = 0;
  double intercept_ = 0, slope_ = 0;
  double residual_ = 0, total_ = 0;  // pass 2: of the whole fit's R²
};

// The window of trend_of: [from, to] (the series' first and last times by default) less the rule's
// start-up and tear-down shares.
std::pair<Seconds, Seconds> trend_window(Seconds first, Seconds last, const TrendRule& rule);

}  // namespace qprof::analysis::detail
