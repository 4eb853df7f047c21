// SPDX-License-Identifier: Apache-2.0
// trace::read_trace_peaks against trace::read_trace: the reduced trace must give the same peak of
// every metric, inside every stage, and of every child, on a trace long enough to be reduced
// many times (GPU devices that skip samples, several directories, stages that repeat).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "qprof/analysis/bottleneck.hpp"
#include "qprof/analysis/checkpoints.hpp"
#include "qprof/analysis/dirs.hpp"
#include "qprof/analysis/metric.hpp"
#include "qprof/analysis/peaks.hpp"
#include "qprof/analysis/timeline.hpp"
#include "qprof/analysis/trend.hpp"
#include "qprof/trace/footprint.hpp"
#include "qprof/trace/format.hpp"
#include "temp_files.hpp"

namespace qprof {
using analysis::available_metrics;
using analysis::child_peaks;
using analysis::find_peak;
using analysis::kTimeSlack;
using analysis::Metric;
using analysis::metric_info;
using analysis::Peak;
using analysis::relative_time;
using analysis::stage_peak;
using analysis::stages_at;
using analysis::stages_named;
using analysis::TimeWindow;
using analysis::trace_end;
using trace::Stage;
using trace::Trace;

namespace {

// `stats`: the CPU, I/O and task lines too, at the PSS schedule.
std::string generated_trace(unsigned seed, int samples, bool stats = false) {
  std::uint64_t x = seed * 2654435761u + 1;
  auto next = [&x](int n) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return static_cast<long long>(x % static_cast<std::uint64_t>(n)) + 1;
  };
  std::string out =
      "QPROF 1 version=0.1.0 interval=0.010000 host=h root_pid=1 start=1000.000000 metric=all\nCMDLINE gen\n"
      "GPUDEV 0 GPU-a 1000000000 A\nGPUDEV 1 GPU-b 1000000000 B\nDIRDEF 0 /d/a\nDIRDEF 1 /d/b\n";
  char line[256];
  for (int i = 0; i < samples; ++i) {
    const double t = 1000.0 + 0.01 * (i + 1);
    std::snprintf(line, sizeof line, "MEM %.6f %.4f\nCHLD %d %.6f %.4f\n", next(1000) * 4096 / 1048576.0, t,
                  100 + i % 3, next(500) * 4096 / 1048576.0, t);
    out += line;
    if (i % 3 == 0) {
      std::snprintf(line, sizeof line, "PSS %.6f %lld %lld %lld\nCGROUP %.6f %lld %lld %lld %lld %lld\n", t,
                    next(900) * 4096, next(800) * 4096, next(700) * 4096, t, next(900) * 4096, next(2000) * 4096,
                    next(500) * 4096, next(500) * 4096, next(400) * 4096);
      out += line;
      std::snprintf(line, sizeof line,
                    "KINDS %.6f %lld %lld %lld %lld\nHWM %.6f %d\nDIR %.6f %d %lld %lld 1000000000\n", t,
                    next(900) * 4096, next(900) * 4096, next(90) * 4096, next(90) * 4096, t, (i + 1) * 4096, t, i % 2,
                    next(900) * 4096, next(900) * 4096);
      out += line;
      if (stats) {
        std::snprintf(line, sizeof line, "CPU %.6f %.6f\nIO %.6f %lld 0 0 0\nTASKS %.6f %lld %lld %lld\n", t, i * 0.004,
                      t, i * 4096LL * next(3), t, next(9), next(90), next(900) * 4096);
        out += line;
      }
      for (int d = 0; d < 2; ++d) {
        if (next(10) > 2) {
          std::snprintf(line, sizeof line, "GPU %.6f %d %lld 100000000\n", t, d, next(900) * 4096);
          out += line;
        }
      }
    }
    if (i % 997 == 500 || i % 997 == 900) {
      std::snprintf(line, sizeof line, "MARK %.6f S%d %s\n", t, (i / 997) % 3, i % 997 == 500 ? "Start" : "End");
      out += line;
    }
  }
  return out + "PEAK kernel_process 1228800\n";
}

void expect_same(const std::optional<Peak>& whole, const std::optional<Peak>& reduced, const std::string& what) {
  ASSERT_EQ(whole.has_value(), reduced.has_value()) << what;
  if (!whole) return;
  EXPECT_EQ(whole->bytes, reduced->bytes) << what;
  EXPECT_EQ(whole->t, reduced->t) << what;
  EXPECT_EQ(whole->exact, reduced->exact) << what;
}

TEST(PeakReader, EveryPeakOfTheReducedTraceIsTheWholeTraces) {
  for (unsigned seed : {1u, 7u}) {
    const std::string path = test::unit_temp_file("peaks" + std::to_string(seed) + ".dat");
    std::ofstream(path) << generated_trace(seed, 12000);
    const Trace whole = trace::read_trace(path);
    const Trace reduced = trace::read_trace_peaks(path);
    EXPECT_LT(reduced.mem.size(), 100u);
    EXPECT_LT(reduced.gpu.size(), 10u);
    ASSERT_EQ(available_metrics(whole), available_metrics(reduced));
    for (Metric m : available_metrics(whole)) {
      const std::string name(metric_info(m).name);
      expect_same(find_peak(whole, m), find_peak(reduced, m), name + " seed " + std::to_string(seed));
      if (!metric_info(m).windowed) continue;
      for (const std::string stage : {"S0", "S1", "S2"}) {
        std::vector<std::pair<Seconds, Seconds>> windows;
        std::vector<TimeWindow> spans;
        for (const Stage* s : stages_named(whole, stage)) {
          windows.emplace_back(s->t_start - kTimeSlack, s->t_end + kTimeSlack);
          spans.push_back({s->t_start, s->t_end});
        }
        // qprof peak --stage reads Σ RSS (and the children's) over the stage's windows, any other
        // metric as report does (the reduced reader): both give the whole trace's figures.
        const Trace in_stage = m == Metric::rss ? trace::read_trace_peaks(path, windows, stage)
                                                : *trace::read_trace_reduced(path, kTimeSlack);
        expect_same(stage_peak(whole, m, stage), stage_peak(in_stage, m, stage), name + " in " + stage);
        if (m != Metric::rss) continue;
        const auto a = child_peaks(whole, spans), b = child_peaks(in_stage, spans);
        ASSERT_EQ(a.size(), b.size());
        for (std::size_t i = 0; i < a.size(); ++i) {
          EXPECT_EQ(a[i].pid, b[i].pid);
          EXPECT_EQ(a[i].bytes, b[i].bytes) << "child " << a[i].pid << " in " << stage;
        }
      }
    }
    const auto a = child_peaks(whole), b = child_peaks(reduced);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].bytes, b[i].bytes);
    EXPECT_EQ(relative_time(whole, 1050.0), relative_time(reduced, 1050.0));
    std::filesystem::remove(path);
  }
}

void expect_same(const std::optional<analysis::Trend>& whole, const std::optional<analysis::Trend>& reduced,
                 const std::string& what) {
  ASSERT_EQ(whole.has_value(), reduced.has_value()) << what;
  if (!whole) return;
  // Bit for bit: the same sums in the same order.
  EXPECT_EQ(whole->fit.slope, reduced->fit.slope) << what;
  EXPECT_EQ(whole->fit.intercept, reduced->fit.intercept) << what;
  EXPECT_EQ(whole->fit.r2, reduced->fit.r2) << what;
  EXPECT_EQ(whole->from, reduced->from) << what;
  EXPECT_EQ(whole->to, reduced->to) << what;
  EXPECT_EQ(whole->samples, reduced->samples) << what;
  EXPECT_EQ(whole->early_slope, reduced->early_slope) << what;
  EXPECT_EQ(whole->late_slope, reduced->late_slope) << what;
  EXPECT_EQ(whole->significant, reduced->significant) << what;
}

// read_trace_reduced (report's and compare's reader) against read_trace: every figure a report
// reads, from the records it keeps or from its passes over the file, is the whole trace's.
TEST(PeakReader, TheTwoPassTraceGivesEveryFigureOfTheWholeTrace) {
  for (unsigned seed : {3u, 11u}) {
    const std::string path = test::unit_temp_file("two_pass" + std::to_string(seed) + ".dat");
    std::ofstream(path) << generated_trace(seed, 12000, true);
    const Trace whole = trace::read_trace(path);
    const auto read = trace::read_trace_reduced(path, kTimeSlack);
    ASSERT_TRUE(read.has_value());
    const Trace& reduced = *read;
    EXPECT_LT(reduced.mem.size(), 200u);
    EXPECT_EQ(reduced.samples(), whole.samples());
    ASSERT_EQ(available_metrics(whole), available_metrics(reduced));
    for (Metric m : available_metrics(whole)) {
      const std::string name(metric_info(m).name);
      expect_same(find_peak(whole, m), find_peak(reduced, m), name);
      if (!metric_info(m).windowed) continue;
      const auto a = analysis::stage_stats(whole, m), b = analysis::stage_stats(reduced, m);
      ASSERT_EQ(a.size(), b.size());
      std::vector<analysis::TrendSpan> spans;
      for (std::size_t i = 0; i < a.size(); ++i) {
        expect_same(a[i].peak, b[i].peak, name + " in stage " + std::to_string(i));
        EXPECT_EQ(a[i].at_start, b[i].at_start) << name << " " << i;
        EXPECT_EQ(a[i].at_end, b[i].at_end) << name << " " << i;
        spans.push_back({a[i].start, a[i].end});
      }
      const auto ta = analysis::stage_trends(whole, m, spans), tb = analysis::stage_trends(reduced, m, spans);
      for (std::size_t i = 0; i < ta.size(); ++i) expect_same(ta[i], tb[i], name + " trend " + std::to_string(i));
    }
    const auto ra = analysis::run_trends(whole), rb = analysis::run_trends(reduced);
    ASSERT_EQ(ra.size(), rb.size());
    for (std::size_t i = 0; i < ra.size(); ++i) expect_same(ra[i].trend, rb[i].trend, ra[i].key);
    const auto ba = analysis::stage_bottlenecks(whole), bb = analysis::stage_bottlenecks(reduced);
    ASSERT_EQ(ba.size(), bb.size());
    for (std::size_t i = 0; i < ba.size(); ++i) {
      EXPECT_TRUE(ba[i].cpu_mean_percent.has_value());
      EXPECT_EQ(ba[i].cpu_mean_percent, bb[i].cpu_mean_percent) << i;
      EXPECT_EQ(ba[i].cpu_peak_percent, bb[i].cpu_peak_percent) << i;
      EXPECT_EQ(ba[i].read_mean_bytes_per_s, bb[i].read_mean_bytes_per_s) << i;
      EXPECT_EQ(ba[i].read_peak_bytes_per_s, bb[i].read_peak_bytes_per_s) << i;
    }
    ASSERT_TRUE(analysis::cpu_use(whole).has_value());
    EXPECT_EQ(analysis::cpu_use(whole)->peak_percent, analysis::cpu_use(reduced)->peak_percent);
    const auto da = analysis::dir_growths(whole), db = analysis::dir_growths(reduced);
    ASSERT_EQ(da.size(), db.size());
    for (std::size_t i = 0; i < da.size(); ++i) {
      EXPECT_EQ(da[i].peak, db[i].peak);
      EXPECT_EQ(da[i].last, db[i].last);
      EXPECT_EQ(da[i].fs_free_min, db[i].fs_free_min);
      EXPECT_EQ(da[i].samples, db[i].samples);
    }
    const auto fa = trace::footprint_of(whole), fb = trace::footprint_of(reduced);
    ASSERT_TRUE(fa && fb);
    EXPECT_EQ(fa->peak, fb->peak);
    EXPECT_EQ(fa->t, fb->t);
    EXPECT_EQ(fa->unreclaimable, fb->unreclaimable);
    EXPECT_EQ(fa->reclaimable, fb->reclaimable);
    const auto ca = analysis::checkpoints(whole, true), cb = analysis::checkpoints(reduced, true);
    ASSERT_EQ(ca.size(), cb.size());
    EXPECT_EQ(ca.back().at.rss, cb.back().at.rss);
    EXPECT_EQ(ca.back().at.gpu_tree, cb.back().at.gpu_tree);
    std::filesystem::remove(path);
  }
}

// Markers and stages by the thousand (an endless FIFO of them must not grow the reader): the
// reduced trace keeps the latest marker and the stages that may hold a peak, and names the same
// stages at every peak as the whole trace does.
TEST(PeakReader, ManyStagesKeepOnlyThoseAtAPeak) {
  const std::string path = test::unit_temp_file("many_stages.dat");
  {
    std::ofstream out(path);
    out << "QPROF 1 version=0.1.0 interval=0.010000 host=h root_pid=1 start=1000.000000 metric=all\nCMDLINE gen\n";
    char line[160];
    for (int i = 0; i < 20000; ++i) {
      const double t = 1000.0 + 0.01 * (i + 1);
      const double mem = i == 7000 ? 9.0 : i == 15000 ? 8.0 : 1.0 + (i % 7) * 0.1;
      std::snprintf(line, sizeof line, "MARK %.6f Outer%d Start\nMEM %.6f %.4f\nMARK %.6f Outer%d End\n", t - 0.004,
                    i / 10, mem, t, t + 0.004, i / 10);
      if (i % 10 != 0) std::snprintf(line, sizeof line, "MEM %.6f %.4f\n", mem, t);
      out << line;
      if (i % 3 == 0) {
        std::snprintf(line, sizeof line, "PSS %.6f %d %d\nMARK %.6f tick\n", t + 0.001, (i == 12000 ? 900 : 100) << 12,
                      50 << 12, t + 0.005);  // after the End at t + 0.004: markers come in time order
        out << line;
      }
    }
    out << "MARK 1300.000000 Last Start\n";  // never ended: it runs to the end of the trace
  }
  const Trace whole = trace::read_trace(path);
  const Trace reduced = trace::read_trace_peaks(path);
  EXPECT_GT(whole.stages.size(), 1000u);
  EXPECT_LT(reduced.stages.size(), 200u);
  EXPECT_LE(reduced.markers.size(), 1u);
  ASSERT_EQ(available_metrics(whole), available_metrics(reduced));
  for (Metric m : available_metrics(whole)) {
    const auto a = find_peak(whole, m), b = find_peak(reduced, m);
    expect_same(a, b, std::string(metric_info(m).name));
    if (!a || !a->t) continue;
    std::vector<std::string> at_whole, at_reduced;
    for (const Stage* s : stages_at(whole, *a->t)) at_whole.push_back(s->name);
    for (const Stage* s : stages_at(reduced, *b->t)) at_reduced.push_back(s->name);
    EXPECT_EQ(at_whole, at_reduced) << metric_info(m).name;
  }
  EXPECT_EQ(trace_end(whole), trace_end(reduced));
  // --stage keeps every stage of its name.
  const std::vector<std::pair<Seconds, Seconds>> no_windows;
  EXPECT_EQ(stages_named(trace::read_trace_peaks(path, no_windows, "Outer700"), "Outer700").size(), 1u);
  EXPECT_EQ(stages_named(trace::read_trace_peaks(path, no_windows, "Last"), "Last").size(), 1u);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace qprof
