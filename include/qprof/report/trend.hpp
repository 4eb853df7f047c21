// SPDX-License-Identifier: Apache-2.0
// A run's trend in words and in the report's document: "grows 12.4 MiB/min (R² 0.97) from 40 s to
// 610 s", said only where analysis/trend.hpp's rule calls the growth significant; the machine
// formats carry every fitted slope, significant or not.
#pragma once

#include <optional>
#include <string>

#include "qprof/analysis/trend.hpp"
#include "qprof/common/units.hpp"
#include "qprof/report/report.hpp"

namespace qprof::report {

// "12.4 MiB/min" or "20.0 MiB/s" (per second from 1 MiB/s up), with a sign when `signed_rate`.
std::string rate_words(double bytes_per_second, bool signed_rate = false);
// One unit for a column of rates, chosen from its largest: per second from 1 MiB/s up, else
// per minute; KiB, MiB or GiB by its size.
struct RateUnit {
  bool per_second = false;
  Unit size = Unit::MiB;
};
RateUnit rate_unit(double largest_bytes_per_second);
// "+20.0 MiB/s", "0.50 MiB/min" in `unit`, with a sign (but for zero) when `signed_rate`.
std::string rate_in(double bytes_per_second, RateUnit unit, bool signed_rate);
// "grows 12.4 MiB/min (R² 0.97) from 40 s to 610 s"
std::string growth_words(const analysis::Trend& trend);
// The summary's line: "Σ RSS grows …; footprint (Σ PSS) grows …" over the series that grow
// significantly; nullopt when none does.
std::optional<std::string> growth_summary(const trace::Trace& trace);
// `qprof report`'s facts: per series (rss, pss), its slope, R², window and verdict (machine
// formats), and the growth in words where it is significant (every format).
void add_trend_facts(Document& doc, const trace::Trace& trace);
// The stage table's slope of `metric` inside each stage: a human column ("+20.0 MiB/s (R² 1.00)")
// and machine ones (slope_bytes_per_s, slope_r2, slope_significant). Rows in stage_stats' order.
void add_stage_trends(Table& stages, const trace::Trace& trace, analysis::Metric metric);

}  // namespace qprof::report
