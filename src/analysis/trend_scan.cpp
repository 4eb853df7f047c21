// SPDX-License-Identifier: Apache-2.0
#include "trend_scan.hpp"

#include <algorithm>
#include <cmath>

namespace qprof::analysis::detail {
using trace::MemSample;

std::pair<Seconds, Seconds> trend_window(Seconds first, Seconds last, const TrendRule& rule) {
  return {first + (last - first) * rule.startup, last - (last - first) * rule.trim};
}

// Pass 0: count, sums, the first and last time. Pass 1: the centred sums of the whole window, and
// the halves' sums. Pass 2: the whole fit's residuals and spread, the halves' centred sums.
void TrendScan::add(int pass, const MemSample& s) {
  const Seconds x = s.t - t0_;
  if (x < lo_ || x > hi_) return;
  const double y = static_cast<double>(s.bytes);
  switch (pass) {
    case 0:
      if (all_.n == 0) first_ = x;
      last_ = x;
      if (!std::isfinite(x) || !std::isfinite(y)) finite_ = false;
      ++all_.n;
      all_.sx += x;
      all_.sy += y;
      break;
    case 1: {
      all_.sxx += (x - all_.mx) * (x - all_.mx);
      all_.sxy += (x - all_.mx) * (y - all_.my);
      Sums& half = x < middle_ ? early_ : late_;
      ++half.n;
      half.sx += x;
      half.sy += y;
      break;
    }
    default: {
      const double e = y - (intercept_ + slope_ * x);
      residual_ += e * e;
      total_ += (y - all_.my) * (y - all_.my);
      Sums& half = x < middle_ ? early_ : late_;
      half.sxx += (x - half.mx) * (x - half.mx);
      half.sxy += (x - half.mx) * (y - half.my);
      break;
    }
  }
}

void TrendScan::end_pass(int pass) {
  const auto means = [](Sums& s) {
    if (s.n == 0) return;
    s.mx = s.sx / static_cast<double>(s.n);
    s.my = s.sy / static_cast<double>(s.n);
  };
  if (pass == 0) {
    means(all_);
    middle_ = (first_ + last_) / 2;
  } else if (pass == 1) {
    if (all_.sxx != 0) {
      slope_ = all_.sxy / all_.sxx;
      intercept_ = all_.my - slope_ * all_.mx;
    }
    means(early_);
    means(late_);
  }
}

bool TrendScan::wants(int pass) const {
  if (pass == 0) return true;
  if (all_.n < kMinTrendReadings || !finite_) return false;
  return pass == 1 || all_.sxx != 0;
}

std::optional<Trend> TrendScan::result(const TrendRule& rule) const {
  if (all_.n < kMinTrendReadings || !finite_ || all_.sxx == 0) return std::nullopt;
  Trend tr;
  tr.fit.slope = slope_;
  tr.fit.intercept = intercept_;
  tr.fit.points = all_.n;
  tr.fit.r2 = total_ == 0 ? 0.0 : 1.0 - residual_ / total_;
  tr.from = first_;
  tr.to = last_;
  tr.samples = all_.n;
  if (early_.fits()) tr.early_slope = early_.slope();
  if (late_.fits()) tr.late_slope = late_.slope();
  const double growth = tr.growth();
  const double level = std::max(0.0, tr.fit.at(tr.from));
  tr.significant = tr.samples >= rule.min_samples && tr.to - tr.from >= rule.min_span && tr.fit.slope > 0 &&
                   tr.fit.r2 >= rule.min_r2 && tr.late_slope >= rule.min_late_share * tr.fit.slope &&
                   tr.late_slope >= rule.min_steady_share * tr.early_slope &&
                   growth >= static_cast<double>(rule.min_growth) && growth >= rule.min_growth_share * level;
  return tr;
}

}  // namespace qprof::analysis::detail
