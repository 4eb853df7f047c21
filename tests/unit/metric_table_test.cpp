// SPDX-License-Identifier: Apache-2.0
// The metric rows (analysis/metric_table.hpp): every row complete, one per kind, names unique
// and parsed back, and has_metric, metric_series and find_peak agreeing with each row on a
// trace that holds every kind of line, and on one that holds none.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "qprof/analysis/metric.hpp"
#include "qprof/analysis/metric_table.hpp"
#include "qprof/analysis/peaks.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using analysis::Metric;
using analysis::metric_rows;
using analysis::MetricKind;
using analysis::MetricRow;
using analysis::PeakRule;
using trace::MemSample;
using trace::Trace;

namespace {

constexpr Bytes kMiB = Bytes{1} << 20;
constexpr int kSamples = 5;  // sample i at t = 100 + i: each series ramps, its highest the last

bool has_picks(const MetricRow& r) {
  const analysis::SamplePicks& p = r.picks;
  return p.mem || p.hwm || p.pss || p.cgroup || p.kinds || p.dir || p.gpu;
}

// Every kind of line, each series at its own level (base MiB + i): a series read from the wrong
// lines peaks at the wrong level.
Trace every_line() {
  Trace t;
  t.dirs.push_back({0, "/scratch/cache"});
  for (int i = 0; i < kSamples; ++i) {
    const Seconds at = 100.0 + i;
    const auto mib = [i](Bytes base) { return (base + static_cast<Bytes>(i)) * kMiB; };
    t.mem.push_back({at, mib(100)});
    t.hwm.push_back({at, mib(300)});
    t.pss.push_back({at, mib(200), mib(150), mib(180)});
    t.cgroup.push_back({at, mib(400), mib(450), mib(350), mib(40), std::nullopt});
    t.kinds.push_back({at, mib(10), mib(20), mib(30), mib(40)});
    t.gpu.push_back({at, 0, mib(50), mib(500), std::nullopt});
    t.gpu.push_back({at, 1, mib(60), mib(600), std::nullopt});
    t.dir_samples.push_back({at, 0, mib(70), mib(70), 1000 * kMiB});
  }
  t.peaks[std::string(trace::kPeakCgroup)] = 460 * kMiB;
  t.peaks[std::string(trace::kPeakHwmSum)] = 320 * kMiB;
  t.peaks[std::string(trace::kPeakKernelProcess)] = 90 * kMiB;
  return t;
}

// The metric of a row: dir:NAME for the dir row.
Metric metric_of(const MetricRow& r) {
  return r.info.metric.kind == MetricKind::dir ? analysis::dir_metric("cache") : r.info.metric;
}

Bytes highest(const std::vector<MemSample>& s) {
  Bytes best = 0;
  for (const MemSample& x : s) best = std::max(best, x.bytes);
  return best;
}

}  // namespace

TEST(MetricTable, OneCompleteRowPerKind) {
  const auto rows = metric_rows();
  ASSERT_EQ(rows.size(), static_cast<std::size_t>(MetricKind::dir) + 1);
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const auto kind = static_cast<MetricKind>(k);
    EXPECT_EQ(std::count_if(rows.begin(), rows.end(), [&](const MetricRow& r) { return r.info.metric.kind == kind; }),
              1)
        << "kind " << k;
    const MetricRow& r = analysis::metric_row(kind);
    EXPECT_EQ(r.info.metric.kind, kind);
    EXPECT_EQ(r.info.metric.index, 0u);
    EXPECT_FALSE(r.info.name.empty()) << k;
    EXPECT_FALSE(r.info.title.empty()) << r.info.name;
    EXPECT_FALSE(r.info.what.empty()) << r.info.name;
    EXPECT_FALSE(r.chart_title.empty()) << r.info.name;
    EXPECT_NE(r.has, nullptr) << r.info.name;
    // A metric sampled over time has a series; only an end-of-run figure may have none.
    if (r.info.windowed) {
      EXPECT_TRUE(has_picks(r)) << r.info.name;
    }
    if (!has_picks(r)) {
      EXPECT_EQ(r.peak, PeakRule::kernel_end) << r.info.name;
    }
  }
  EXPECT_EQ(rows.back().info.metric.kind, MetricKind::dir);  // built-ins first, in table order
}

TEST(MetricTable, NamesAndTitlesAreUnique) {
  std::set<std::string_view> names, titles;
  for (const MetricRow& r : metric_rows()) {
    EXPECT_TRUE(names.insert(r.info.name).second) << r.info.name;
    EXPECT_TRUE(titles.insert(r.info.title).second) << r.info.title;
  }
}

TEST(MetricTable, ParseMetricRoundTripsEveryRow) {
  std::vector<Metric> built_in;
  for (const MetricRow& r : metric_rows()) {
    if (r.info.metric.kind == MetricKind::dir) {
      EXPECT_EQ(analysis::metric_row_named(r.info.name), nullptr);  // "dir" alone names nothing
      const auto m = analysis::parse_metric("dir:cache");
      ASSERT_TRUE(m);
      EXPECT_EQ(m->kind, MetricKind::dir);
      EXPECT_EQ(analysis::metric_info(*m).name, "dir:cache");
      EXPECT_EQ(analysis::metric_info(*m).what, r.info.what);
      continue;
    }
    built_in.push_back(r.info.metric);
    const auto m = analysis::parse_metric(r.info.name);
    ASSERT_TRUE(m) << r.info.name;
    EXPECT_EQ(*m, r.info.metric);
    EXPECT_EQ(analysis::metric_info(*m).name, r.info.name);
    EXPECT_EQ(analysis::metric_row_named(r.info.name), &r);
  }
  EXPECT_EQ(analysis::all_metrics(), built_in);
  EXPECT_FALSE(analysis::parse_metric("RSS"));
  EXPECT_FALSE(analysis::parse_metric("dir:"));
}

TEST(MetricTable, HasSeriesAndPeakAgreeOnEveryRow) {
  const Trace t = every_line();
  for (const MetricRow& r : metric_rows()) {
    const Metric m = metric_of(r);
    SCOPED_TRACE(std::string(r.info.name));
    EXPECT_TRUE(analysis::has_metric(t, m));
    const auto series = analysis::metric_series(t, m);
    EXPECT_EQ(series.empty(), !has_picks(r));
    if (has_picks(r)) {
      EXPECT_EQ(series.size(), static_cast<std::size_t>(kSamples));
    }
    const auto peak = analysis::find_peak(t, m);
    ASSERT_TRUE(peak);
    EXPECT_GE(peak->bytes, highest(series));
    if (r.peak == PeakRule::highest_sample) {
      EXPECT_EQ(peak->bytes, highest(series));
      EXPECT_EQ(peak->t, std::optional<Seconds>(100.0 + kSamples - 1));
    }
  }
  // Each series from its own lines: its level is the line's.
  const auto top = [&](Metric m) { return highest(analysis::metric_series(t, m)) / kMiB; };
  EXPECT_EQ(top(Metric::footprint), 404u);  // the charge
  EXPECT_EQ(top(Metric::unreclaimable), 354u);
  EXPECT_EQ(top(Metric::rss), 104u);
  EXPECT_EQ(top(Metric::pss), 204u);
  EXPECT_EQ(top(Metric::uss), 154u);
  EXPECT_EQ(top(Metric::gpu), 50u + 60u + 8u);  // the devices summed
  EXPECT_EQ(top(Metric::cgroup), 404u);
  EXPECT_EQ(top(Metric::hwm_sum), 304u);
  EXPECT_EQ(top(Metric::anon), 14u);
  EXPECT_EQ(top(Metric::file), 24u);
  EXPECT_EQ(top(Metric::shmem), 34u);
  EXPECT_EQ(top(Metric::swap), 44u);
  EXPECT_EQ(top(analysis::dir_metric("cache")), 74u);
  // The charge's peak is the kernel's high-water mark; the end-of-run figures their PEAK lines.
  EXPECT_EQ(analysis::find_peak(t, Metric::footprint)->bytes, 460 * kMiB);
  EXPECT_EQ(analysis::find_peak(t, Metric::cgroup)->bytes, 460 * kMiB);
  EXPECT_EQ(analysis::find_peak(t, Metric::kernel_process)->bytes, 90 * kMiB);
}

TEST(MetricTable, WithoutCgroupTheFootprintIsPss) {
  Trace t = every_line();
  t.cgroup.clear();
  t.peaks.erase(std::string(trace::kPeakCgroup));
  EXPECT_FALSE(analysis::has_metric(t, Metric::cgroup));
  const auto footprint = analysis::find_peak(t, Metric::footprint);
  ASSERT_TRUE(footprint);
  EXPECT_EQ(footprint->bytes, 204 * kMiB);
  EXPECT_FALSE(footprint->exact);
  EXPECT_EQ(highest(analysis::metric_series(t, Metric::unreclaimable)), 184 * kMiB);
}

TEST(MetricTable, AnEmptyTraceHasNoMetric) {
  const Trace t;
  for (const MetricRow& r : metric_rows()) {
    const Metric m = metric_of(r);
    SCOPED_TRACE(std::string(r.info.name));
    EXPECT_FALSE(analysis::has_metric(t, m));
    EXPECT_TRUE(analysis::metric_series(t, m).empty());
    EXPECT_FALSE(analysis::find_peak(t, m));
  }
}

}  // namespace qprof::test
