// SPDX-License-Identifier: Apache-2.0
// One rule for every chart: a figure far above the data drawn (a limit at the machine's MemTotal,
// Σ VmHWM of workers that never coexisted) is written in a note under the chart instead of being
// drawn, so that the axis fits the data and the data is not flattened against the x axis.
#pragma once

namespace qprof::plot {

// "Far": more than this many times the largest value drawn.
inline constexpr double kOffChartFactor = 1.5;

// Whether `value` lies far above `data_max`, the largest value drawn (same unit); never with
// nothing drawn (data_max <= 0).
constexpr bool off_chart(double value, double data_max) { return data_max > 0 && value > kOffChartFactor * data_max; }

}  // namespace qprof::plot
