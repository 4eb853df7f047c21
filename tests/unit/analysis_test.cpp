// SPDX-License-Identifier: Apache-2.0
// Peaks, stages, checkpoints, budgets and comparisons over hand-written traces whose numbers are
// known (tests/data/report/: quark.dat has every series; open_stage.dat a stage that never ended).
#include "qprof/analysis/metric.hpp"
#include "qprof/analysis/timeline.hpp"
#include "qprof/analysis/peaks.hpp"
#include "qprof/analysis/checkpoints.hpp"
#include "qprof/analysis/budgets.hpp"
#include "qprof/analysis/compare.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

#include "qprof/trace/format.hpp"

namespace qprof {
using analysis::all_metrics;
using analysis::available_metrics;
using analysis::check_budget;
using analysis::check_rows;
using analysis::checkpoints;
using analysis::child_peaks;
using analysis::compare;
using analysis::Comparison;
using analysis::find_peak;
using analysis::Metric;
using analysis::metric_info;
using analysis::metric_names;
using analysis::metric_series;
using analysis::parse_growth;
using analysis::parse_metric;
using analysis::peak_column;
using analysis::spread_of;
using analysis::stage_peak;
using analysis::stage_stats;
using analysis::stages_at;
using analysis::trace_duration;
using analysis::where_in_stages;
using trace::Trace;

namespace {

constexpr Bytes MiB = 1 << 20;
constexpr Seconds kQuarkStart = 1709395200.0;

Trace fixture(const std::string& name) { return trace::read_trace(std::string(QPROF_TEST_DATA) + "/report/" + name); }

Bytes mib(double m) { return trace::from_mib(m); }

TEST(Metrics, NamesRoundTripAndUnknownNamesAreRefused) {
  for (Metric m : all_metrics()) EXPECT_EQ(parse_metric(metric_info(m).name), m);
  EXPECT_EQ(parse_metric("RSS"), std::nullopt);
  EXPECT_EQ(parse_metric("vram"), std::nullopt);
  EXPECT_EQ(metric_names(),
            "footprint, unreclaimable, rss, pss, uss, gpu, cgroup, hwm_sum, kernel_process, anon, file, shmem, swap");
}

TEST(Metrics, AvailableAreThoseTheTraceHas) {
  // Every metric but the memory kinds (KINDS lines) and the unreclaimable part (CGROUP's anon),
  // which the fixture predates; its CGROUP lines make the footprint the cgroup's charge.
  EXPECT_EQ(available_metrics(fixture("quark.dat")),
            (std::vector<Metric>{Metric::footprint, Metric::rss, Metric::pss, Metric::uss, Metric::gpu, Metric::cgroup,
                                 Metric::hwm_sum, Metric::kernel_process}));
  EXPECT_EQ(available_metrics(fixture("open_stage.dat")), std::vector<Metric>{Metric::rss});
  EXPECT_EQ(available_metrics(fixture("minmax.dat")), (std::vector<Metric>{Metric::rss, Metric::kernel_process}));
}

TEST(Metrics, GpuSeriesSumsTheDevicesAtEachSampleTime) {
  const auto s = metric_series(fixture("quark.dat"), Metric::gpu);
  ASSERT_EQ(s.size(), 6u);
  const std::vector<double> expected{0, 1024, 2048.5, 2050, 1536, 1530};
  for (std::size_t i = 0; i < s.size(); ++i) EXPECT_EQ(s[i].bytes, mib(expected[i])) << i;
  EXPECT_DOUBLE_EQ(s[2].t, kQuarkStart + 10);
}

TEST(Peaks, EveryMetricOfTheFullTrace) {
  const Trace t = fixture("quark.dat");
  struct Expect {
    Metric m;
    double mib;
    std::optional<Seconds> at;
    bool exact;
  };
  for (const Expect& e : {
           Expect{Metric::rss, 900, 22.0, false},
           Expect{Metric::pss, 850, 22.0, false},
           Expect{Metric::uss, 800, 22.0, false},
           Expect{Metric::gpu, 2050, 21.0, false},
           // The kernel's high-water mark (950) is above every usage sample (920 at most); it was
           // first seen by the sample at 22 s.
           Expect{Metric::cgroup, 950, 22.0, true},
           Expect{Metric::hwm_sum, 1000, 35.5, false},
           Expect{Metric::kernel_process, 700, std::nullopt, true},
       }) {
    const auto p = find_peak(t, e.m);
    ASSERT_TRUE(p) << metric_info(e.m).name;
    EXPECT_EQ(p->bytes, mib(e.mib)) << metric_info(e.m).name;
    EXPECT_EQ(p->exact, e.exact) << metric_info(e.m).name;
    ASSERT_EQ(p->t.has_value(), e.at.has_value()) << metric_info(e.m).name;
    if (e.at) {
      EXPECT_NEAR(*p->t - kQuarkStart, *e.at, 1e-6) << metric_info(e.m).name;
    }
  }
  EXPECT_EQ(find_peak(fixture("open_stage.dat"), Metric::gpu), std::nullopt);
}

TEST(Peaks, InsideAStageIncludesBothMarkerSamples) {
  const Trace t = fixture("open_stage.dat");
  // Eval's peak is the sample of its End marker; Load's is strictly inside.
  EXPECT_EQ(stage_peak(t, Metric::rss, "Eval")->bytes, 400 * MiB);
  EXPECT_EQ(stage_peak(t, Metric::rss, "Load")->bytes, 150 * MiB);
  EXPECT_EQ(stage_peak(t, Metric::rss, "Nope"), std::nullopt);
  const Trace q = fixture("quark.dat");
  EXPECT_EQ(stage_peak(q, Metric::gpu, "Calibration")->bytes, mib(2048.5));
  EXPECT_EQ(stage_peak(q, Metric::gpu, "Pre-process"), std::nullopt);  // no GPU sample inside
}

TEST(Peaks, TheChargeReadAtAStartMarkerBelongsToTheStagesExactPeak) {
  // The charge at B's start marker (100 MiB + 8 KiB) was read before B's window opened; 8 KiB was
  // freed between the two, so the window's peak is 100 MiB. B's peak is that reading, and exact.
  const Trace t = fixture("window_after_start.dat");
  const auto st = stage_stats(t, Metric::footprint);
  ASSERT_EQ(st.size(), 1u);
  ASSERT_TRUE(st[0].peak && st[0].at_start);
  EXPECT_EQ(st[0].peak->bytes, 100 * MiB + 8192);
  EXPECT_TRUE(st[0].peak->exact);
  EXPECT_GE(st[0].peak->bytes, *st[0].at_start) << "a peak below the stage's own start reading";
  const auto p = stage_peak(t, Metric::footprint, "B");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->bytes, 100 * MiB + 8192);
  EXPECT_TRUE(p->exact);
}

// A stage left open (the job OOM-killed inside it) runs to the trace's end, its EXIT record: the
// charge read after the last RSS sample, at the kill, is the stage's peak, and the footprint's peak
// is said to be in it. The stage ended at the last MEM sample, and the kill's peak fell in no stage.
TEST(Peaks, AStageLeftOpenRunsToTheExitAndHoldsTheKillsPeak) {
  const Trace t = trace::read_trace_text(
      "QPROF 1 version=0.1.0 interval=0.010000 host=vm root_pid=1 start=100.000000 metric=all "
      "cgroup=/sys/fs/cgroup/memory/qprof-1\n"
      "CMDLINE python3 alloc.py\n"
      "MEM 10.000000 100.0000\n"
      "CGROUP 100.000000 10485760 10485760\n"
      "CGROUP 100.200000 10485760 10485760\n"  // the record qprof writes at each marker
      "MARK 100.200000 Alloc Start\n"
      "MEM 70.000000 100.4700\n"
      "CGROUP 100.470000 73400320 76546048\n"
      "CGROUP 100.484000 258048 83886080\n"
      "NOTE stage 'Alloc' was started but never ended\n"
      "PEAK cgroup 83886080\n"
      "EXIT 100.484000 status=137 signal=9 timed_out=0\n",
      "oom.dat");
  ASSERT_EQ(t.stages.size(), 1u);
  EXPECT_FALSE(t.stages[0].closed);
  EXPECT_DOUBLE_EQ(t.stages[0].t_end, 100.484);
  const auto p = stage_peak(t, Metric::footprint, "Alloc");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->bytes, 80 * MiB);
  const auto whole = find_peak(t, Metric::footprint);
  ASSERT_TRUE(whole && whole->t);
  const auto in = stages_at(t, *whole->t);
  ASSERT_EQ(in.size(), 1u);
  EXPECT_EQ(in.front()->name, "Alloc");
}

// A stage's exact peak from the kernel is timed as the job's is: by a sample that read it, else by
// the first CGROUP record whose high-water column reached it. After a higher stage the column says
// nothing, and the moment stays unknown unless a sample read the peak.
TEST(Peaks, AStagesExactPeakIsTimedWhereTheRecordsSayWhen) {
  const Trace t = trace::read_trace_text(
      "QPROF 1 version=0.1.0 interval=0.100000 host=vm root_pid=1 start=100.000000 metric=all "
      "cgroup=/sys/fs/cgroup/memory/qprof-1\n"
      "CMDLINE three stages\n"
      "MEM 5.0000 100.100000\n"
      "CGROUP 100.100000 10485760 10485760\n"
      "CGPEAK 100.100000 10485760\n"
      "MARK 100.100000 A Start\n"
      "MEM 5.0000 100.200000\n"
      "CGROUP 100.200000 73400320 73400320\n"
      "MEM 5.0000 100.300000\n"
      "CGROUP 100.300000 20971520 83886080\n"  // 80 MiB reached between the two records
      "MEM 5.0000 100.400000\n"
      "CGROUP 100.400000 20971520 83886080\n"
      "CGPEAK 100.400000 83886080\n"
      "MARK 100.400000 A End\n"
      "MARK 100.400000 B Start\n"
      "MEM 5.0000 100.500000\n"
      "CGROUP 100.500000 41943040 83886080\n"
      "MEM 5.0000 100.600000\n"
      "CGROUP 100.600000 20971520 83886080\n"
      "CGPEAK 100.600000 52428800\n"  // 50 MiB between two records that read less
      "MARK 100.600000 B End\n"
      "MARK 100.600000 C Start\n"
      "MEM 5.0000 100.700000\n"
      "CGROUP 100.700000 31457280 83886080\n"
      "MEM 5.0000 100.800000\n"
      "CGROUP 100.800000 20971520 83886080\n"
      "CGPEAK 100.800000 31457280\n"  // 30 MiB, read by the record at 100.7
      "MARK 100.800000 C End\n"
      "EXIT 100.900000 status=0 signal=0 timed_out=0\n",
      "stages.dat");
  const auto st = stage_stats(t, Metric::footprint);
  ASSERT_EQ(st.size(), 3u);
  struct Expect {
    Bytes peak;
    std::optional<double> at;
  };
  const Expect expected[] = {{80 * MiB, 100.3}, {50 * MiB, std::nullopt}, {30 * MiB, 100.7}};
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(st[i].peak) << st[i].stage.name;
    EXPECT_EQ(st[i].peak->bytes, expected[i].peak) << st[i].stage.name;
    EXPECT_TRUE(st[i].peak->exact) << st[i].stage.name;
    ASSERT_EQ(st[i].peak->t.has_value(), expected[i].at.has_value()) << st[i].stage.name;
    if (expected[i].at) {
      EXPECT_NEAR(*st[i].peak->t, *expected[i].at, 1e-9) << st[i].stage.name;
    }
  }
  const auto whole = find_peak(t, Metric::footprint);
  ASSERT_TRUE(whole && whole->t);
  EXPECT_NEAR(*whole->t, 100.3, 1e-9) << "the job's peak and its stage's agree";
}

// A stage that runs twice to the same exact peak: the run whose moment is known is the stage's
// (the second began with the column already at that height, and has none).
TEST(Peaks, OfTwoRunsWithEqualExactPeaksTheTimedOneIsGiven) {
  const Trace t = trace::read_trace_text(
      "QPROF 1 version=0.1.0 interval=0.100000 host=vm root_pid=1 start=100.000000 metric=all "
      "cgroup=/sys/fs/cgroup/memory/qprof-1\n"
      "CMDLINE one stage twice\n"
      "MEM 5.0000 100.100000\n"
      "CGROUP 100.100000 10485760 10485760\n"
      "CGPEAK 100.100000 10485760\n"
      "MARK 100.100000 E Start\n"
      "MEM 5.0000 100.200000\n"
      "CGROUP 100.200000 10485760 314572800\n"  // 300 MiB reached since 100.1
      "CGPEAK 100.300000 314572800\n"
      "MARK 100.300000 E End\n"
      "MEM 5.0000 100.400000\n"
      "CGROUP 100.400000 10485760 314572800\n"
      "CGPEAK 100.400000 10485760\n"
      "MARK 100.400000 E Start\n"
      "MEM 5.0000 100.500000\n"
      "CGROUP 100.500000 10485760 314572800\n"
      "CGPEAK 100.600000 314572800\n"  // 300 MiB again, between two records that read less
      "MARK 100.600000 E End\n"
      "EXIT 100.700000 status=0 signal=0 timed_out=0\n",
      "twice.dat");
  const auto st = stage_stats(t, Metric::footprint);
  ASSERT_EQ(st.size(), 2u);
  ASSERT_TRUE(st[0].peak && st[1].peak);
  EXPECT_EQ(st[0].peak->t, std::optional<double>(100.2));
  EXPECT_EQ(st[1].peak->t, std::nullopt);
  const auto p = stage_peak(t, Metric::footprint, "E");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->bytes, 300 * MiB);
  EXPECT_TRUE(p->exact);
  EXPECT_EQ(p->t, std::optional<double>(100.2));
}

TEST(Peaks, ChildrenOfAMultiprocessTrace) {
  const Trace t = trace::read_trace(std::string(QPROF_TEST_DATA) + "/mprof/children.dat");
  const auto c = child_peaks(t);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].pid, 5585);
  EXPECT_EQ(c[0].bytes, mib(35.894531));
}

TEST(Stages, StatisticsOfTheQuarkTrace) {
  const Trace t = fixture("quark.dat");
  EXPECT_NEAR(trace_duration(t), 35.6, 1e-6);  // to the EXIT line
  const auto st = stage_stats(t);
  ASSERT_EQ(st.size(), 3u);
  struct Expect {
    const char* name;
    double start, end, peak, at_start, at_end;
  };
  const Expect expected[] = {
      {"Pre-process", 1.2, 3.5, 520, 256, 512.5},
      {"Calibration", 4.0, 20.5, 700, 515, 520},
      {"Quantization (Static)", 21.0, 35.0, 900, 768, 640},
  };
  for (std::size_t i = 0; i < 3; ++i) {
    const Expect& e = expected[i];
    EXPECT_EQ(st[i].stage.name, e.name);
    EXPECT_NEAR(st[i].start, e.start, 1e-6);
    EXPECT_NEAR(st[i].end, e.end, 1e-6);
    EXPECT_NEAR(st[i].duration, e.end - e.start, 1e-6);
    EXPECT_NEAR(st[i].share, (e.end - e.start) / 35.6, 1e-7);
    EXPECT_EQ(st[i].peak->bytes, mib(e.peak)) << e.name;
    EXPECT_EQ(*st[i].at_start, mib(e.at_start)) << e.name;
    EXPECT_EQ(*st[i].at_end, mib(e.at_end)) << e.name;
    EXPECT_TRUE(st[i].stage.closed);
  }
}

TEST(Stages, AnUnclosedStageRunsToTheEndOfTheTrace) {
  const Trace t = fixture("open_stage.dat");
  EXPECT_NEAR(trace_duration(t), 0.8, 1e-6);  // no EXIT: to the last sample
  const auto st = stage_stats(t);
  ASSERT_EQ(st.size(), 3u);
  EXPECT_EQ(st[1].stage.name, "Train");
  EXPECT_FALSE(st[1].stage.closed);
  EXPECT_NEAR(st[1].end, 0.8, 1e-6);
  EXPECT_EQ(st[1].peak->bytes, 400 * MiB);
  EXPECT_EQ(*st[1].at_end, 260 * MiB);
}

TEST(Stages, AnMprofTracesFuncLinesAreItsStages) {
  const Trace t = trace::read_trace(std::string(QPROF_TEST_DATA) + "/mprof/func.dat");
  const auto st = stage_stats(t);
  ASSERT_EQ(st.size(), 2u);
  EXPECT_EQ(st[1].stage.name, "__main__.calibrate");
  // Its decorator wrote the end after the last sample: the run lasts until then.
  EXPECT_NEAR(trace_duration(t), 1795255549.2193 - 1795255548.5936, 1e-6);
  EXPECT_NEAR(st[0].share + st[1].share, (1795255549.2193 - 1795255548.6497) / trace_duration(t), 1e-6);
  EXPECT_EQ(st[1].peak->bytes, trace::from_mib(141.796875));
}

TEST(Stages, OtherMetricsTakeTheLatestSampleAtEachMarker) {
  const auto st = stage_stats(fixture("quark.dat"), Metric::gpu);
  EXPECT_EQ(*st[0].at_start, 0u);
  EXPECT_FALSE(st[0].peak);
  EXPECT_EQ(*st[1].at_start, 1024 * MiB);
  EXPECT_EQ(*st[1].at_end, mib(2048.5));
  EXPECT_EQ(st[2].peak->bytes, 2050 * MiB);
  EXPECT_FALSE(metric_info(Metric::kernel_process).windowed) << "stage_stats' precondition rules it out";
  EXPECT_DEBUG_DEATH(stage_stats(fixture("quark.dat"), Metric::kernel_process), "no peak inside a stage");
}

TEST(Stages, NestedStagesAtATimeInnermostFirst) {
  const Trace t = fixture("open_stage.dat");
  const auto at = stages_at(t, 1700000000.65);
  ASSERT_EQ(at.size(), 2u);
  EXPECT_EQ(at[0]->name, "Eval");
  EXPECT_EQ(at[1]->name, "Train");
  EXPECT_TRUE(stages_at(t, 1700000000.35).empty());
  EXPECT_EQ(where_in_stages({"Eval", "Train"}, true), "in stage 'Eval' (inside 'Train')");
  EXPECT_EQ(where_in_stages({}, true), "outside any stage");
  EXPECT_EQ(where_in_stages({}, false), "");
}

TEST(Checkpoints, StartMarkersAndEndWithEverySeries) {
  const Trace t = fixture("quark.dat");
  const auto cps = checkpoints(t);
  ASSERT_EQ(cps.size(), 9u);
  EXPECT_EQ(cps.front().step, "Start");
  EXPECT_EQ(*cps.front().at.rss, mib(128.5));
  EXPECT_EQ(*cps.front().at.gpu_tree, 0u);
  EXPECT_EQ(cps[6].step, "Checkpoint saved");
  EXPECT_EQ(*cps[6].at.gpu_tree, 2050 * MiB);
  EXPECT_EQ(cps.back().step, "End");
  EXPECT_DOUBLE_EQ(cps.back().t, kQuarkStart + 35.5);
  EXPECT_EQ(*cps.back().at.rss, 635 * MiB);
  EXPECT_EQ(*cps.back().at.gpu_tree, 1530 * MiB);
  EXPECT_EQ(*cps.back().at.read_bytes, 906 * MiB);
  EXPECT_EQ(*cps.back().at.write_bytes, mib(159.25));
  EXPECT_EQ(checkpoints(t, false).back().step, "Quantization (Static) End");
}

TEST(Budgets, OverAndUnderWithTheStageOfThePeak) {
  const Trace t = fixture("quark.dat");
  const auto over = check_budget(t, Metric::rss, 800 * MiB);
  ASSERT_TRUE(over);
  EXPECT_TRUE(over->exceeded());
  EXPECT_EQ(over->over(), 100 * MiB);
  EXPECT_EQ(over->stages, std::vector<std::string>{"Quantization (Static)"});
  const auto under = check_budget(t, Metric::rss, 900 * MiB);  // equal is within
  EXPECT_FALSE(under->exceeded());
  EXPECT_EQ(under->over(), 0u);
  EXPECT_EQ(check_budget(fixture("open_stage.dat"), Metric::pss, MiB), std::nullopt);
}

TEST(Budgets, GrowthIsAPercentageOrASize) {
  EXPECT_EQ(parse_growth("10%")->limit_over(1000), 1100u);
  EXPECT_EQ(parse_growth("0%")->limit_over(1000), 1000u);
  EXPECT_EQ(parse_growth("2.5%")->text(), "2.5%");
  EXPECT_EQ(parse_growth("200MiB")->limit_over(MiB), 201 * MiB);
  EXPECT_EQ(parse_growth("1024")->limit_over(0), 1024 * MiB) << "a bare size is MiB, as mprof counts";
  EXPECT_EQ(parse_growth("1.5")->limit_over(0), 3 * MiB / 2);
  for (const char* bad : {"", "%", "-5%", "ten%", "10 %x", "5 gigs", "1.5 parsecs"})
    EXPECT_EQ(parse_growth(bad), std::nullopt) << bad;
}

TEST(Compare, LowestAndRatiosPerColumn) {
  const Trace a = fixture("minmax.dat"), b = fixture("percentile.dat"), c = fixture("layerwise.dat"),
              d = fixture("minmse.dat");
  const Comparison cmp =
      compare({{"minmax", {&a}}, {"percentile", {&b}}, {"layerwise", {&c}}, {"minmse", {&d}}}, Metric::rss, true);
  std::vector<std::string> keys;
  for (const auto& col : cmp.columns) keys.push_back(col.key + (col.stage.empty() ? "" : ":" + col.stage));
  EXPECT_EQ(keys, (std::vector<std::string>{"duration", "peak_rss", "peak_kernel_process", "disk_read", "disk_write",
                                            "stage_peak:Calibration", "stage_peak:Quantization"}));
  const std::size_t rss = *peak_column(cmp, Metric::rss);
  EXPECT_EQ(cmp.rows[2][rss].value->median, 2468.0 * MiB);
  EXPECT_TRUE(cmp.rows[2][rss].lowest);
  EXPECT_FALSE(cmp.rows[0][rss].lowest);
  EXPECT_NEAR(*cmp.rows[1][rss].ratio, 2724.0 / 2580.0, 1e-12);
  // A column where two rows tie for the lowest marks both; rows without the value have none.
  const std::size_t read = 3;
  EXPECT_TRUE(cmp.rows[0][read].lowest);
  EXPECT_TRUE(cmp.rows[1][read].lowest);
  EXPECT_FALSE(cmp.rows[3][read].value);
  EXPECT_FALSE(cmp.rows[3][read].ratio);
  // layerwise peaks in Quantization, the others in Calibration.
  EXPECT_EQ(cmp.rows[2][6].value->median, 2468.0 * MiB);
  EXPECT_EQ(cmp.rows[2][5].value->median, 2200.0 * MiB);
}

TEST(Compare, BudgetsOnTheRows) {
  const Trace a = fixture("minmax.dat"), b = fixture("percentile.dat"), c = fixture("layerwise.dat"),
              d = fixture("open_stage.dat");
  const Comparison cmp = compare({{"minmax", {&a}}, {"percentile", {&b}}, {"layerwise", {&c}}}, Metric::rss, false);
  // percentile is 2724 / 2580 − 1 = 5.58 % above minmax: over 5 % (2709 MiB) by 15 MiB.
  auto rows = check_rows(cmp, std::nullopt, parse_growth("5%"), false);
  EXPECT_FALSE(rows[0].checked);
  ASSERT_TRUE(rows[1].checked && rows[1].known);
  EXPECT_EQ(rows[1].baseline, 2580 * MiB);
  EXPECT_NEAR(rows[1].growth, 2724.0 / 2580.0 - 1.0, 1e-9);
  EXPECT_EQ(rows[1].over_growth, 15 * MiB);
  EXPECT_FALSE(rows[2].over());
  // --max-peak: every row, but an explicit baseline.
  rows = check_rows(cmp, 2500 * MiB, std::nullopt, true);
  EXPECT_FALSE(rows[0].checked);
  EXPECT_EQ(rows[1].over_max_peak, 224 * MiB);
  EXPECT_FALSE(rows[2].over());
  EXPECT_TRUE(check_rows(cmp, 2500 * MiB, std::nullopt, false)[0].over());
  // A row without the metric is not known: it is neither over nor within.
  const Comparison gpu = compare({{"quark", {&d}}, {"q", {&a}}}, Metric::gpu, false);
  rows = check_rows(gpu, MiB, parse_growth("1%"), false);
  EXPECT_TRUE(rows[1].checked);
  EXPECT_FALSE(rows[1].known);
  EXPECT_FALSE(rows[1].over());
}

TEST(Compare, RepeatedRunsGiveMedianAndSpread) {
  const Trace a = fixture("minmax.dat"), b = fixture("percentile.dat"), c = fixture("layerwise.dat");
  const Comparison cmp = compare({{"three", {&a, &b, &c}}, {"one", {&b}}}, Metric::rss, false);
  const auto& v = *cmp.rows[0][*peak_column(cmp, Metric::rss)].value;
  EXPECT_EQ(v.median, 2580.0 * MiB);
  EXPECT_EQ(v.min, 2468.0 * MiB);
  EXPECT_EQ(v.max, 2724.0 * MiB);
  EXPECT_EQ(spread_of({1, 2, 3, 4})->median, 2.5);
  EXPECT_EQ(spread_of({}), std::nullopt);
  // A single row marks nothing as lowest.
  const Comparison single = compare({{"one", {&a}}}, Metric::rss, false);
  for (const auto& v1 : single.rows[0]) EXPECT_FALSE(v1.lowest);
}

}  // namespace
}  // namespace qprof
