// SPDX-License-Identifier: Apache-2.0
// The run's end figures alone, over a synthetic /proc: the tree's totals and Σ VmHWM in the
// report and as PEAK lines, and a kernel peak far above the sampled one said as a missed spike.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "fake_proc.hpp"
#include "session/end_figures.hpp"
#include "qprof/runs/run_summary.hpp"
#include "temp_files.hpp"

namespace qprof::record::session {
using runs::format_summary;
using trace::TasksSample;

namespace {

constexpr pid_t kSelf = 1000;
constexpr pid_t kRoot = 100;

struct SampledTree {
  test::FakeProc proc;
  ProcTree tree{proc.root(), kSelf};
  WallAnchor clock;
  std::string path = test::unit_temp_file("end-figures.dat");
  std::unique_ptr<trace::Writer> out = std::make_unique<trace::Writer>(path);
  std::unique_ptr<Sampler> sampler;
  std::vector<std::string> said;
  Notices notices{said};
  std::optional<MemoryCgroupDir> no_cgroup;

  SampledTree() {
    proc.add(kRoot, kSelf, 10, 25, {.utime = 10, .stime = 5, .write_bytes = 4096, .hwm_kib = 2048});
    proc.set_last_pid(kRoot);
    tree.add_root(kRoot);
    SamplerConfig config;
    config.page_size = 4096;
    config.proc_root = proc.root();
    sampler = std::make_unique<Sampler>(tree, *out, clock, std::move(config));
    const std::int64_t now = monotonic_ns();
    sampler->sample(now);
    sampler->sample_stats(now);
  }
  ~SampledTree() { std::filesystem::remove(path); }
  std::string trace() {
    out->close();
    return test::whole_file(path);
  }
};

TEST(SessionEndFigures, TheTreesTotalsAndItsSumOfPeaksGoToTheReportAndTheTrace) {
  SampledTree t;
  RunReport report;
  report.sampled_peak = t.sampler->peak();
  record_tree_figures(TreeSources{*t.sampler, nullptr, t.no_cgroup, 0.1}, *t.out, t.notices, report);
  EXPECT_DOUBLE_EQ(report.usage.cpu_seconds, 0.15);
  EXPECT_EQ(report.usage.io.write_bytes, 4096u);
  EXPECT_EQ(report.hwm.sum, Bytes{2048} * 1024);
  EXPECT_EQ(report.hwm.uncovered, 0u);
  EXPECT_GT(report.profiler_cpu_seconds, 0);
  EXPECT_TRUE(t.said.empty());
  EXPECT_NE(t.trace().find("PEAK hwm_sum 2097152"), std::string::npos);
}

TEST(SessionEndFigures, AKernelPeakFarAboveTheSampledOneIsAMissedSpikeAndRaisesTheSum) {
  SampledTree t;
  RunReport report;
  report.sampled_peak = t.sampler->peak();
  report.kernel_process_peak = Bytes{100} << 20;
  record_tree_figures(TreeSources{*t.sampler, nullptr, t.no_cgroup, 0.1}, *t.out, t.notices, report);
  EXPECT_EQ(report.hwm.sum, Bytes{100} << 20);  // the bracket: no smaller than a figure it bounds
  ASSERT_EQ(t.said.size(), 1u);
  EXPECT_NE(t.said[0].find("a spike between samples was missed"), std::string::npos);
  const std::string text = t.trace();
  EXPECT_NE(text.find("was below a figure it bounds"), std::string::npos);
  EXPECT_NE(text.find("PEAK hwm_sum 104857600"), std::string::npos);
}

TEST(SessionSummary, MissedDeadlinesAreSaidWithTheirCause) {
  // forker_nowait 5000: 45 of 50 deadlines missed, and the summary said so without a why.
  RunReport r;
  r.command = "forker_nowait 5000";
  r.launched = true;
  r.sampling.samples = 5;
  r.sampling.missed_deadlines = 45;
  r.usage.most_tasks = TasksSample{};
  r.usage.most_tasks->processes = 1142;
  // The summary wraps at 80 columns: its continuation lines joined back into one.
  std::string text = format_summary(r);
  for (std::size_t at; (at = text.find("\n       ")) != std::string::npos;) {
    const std::size_t words = text.find_first_not_of(' ', at + 1);
    text.replace(at, words - at, " ");
  }
  EXPECT_NE(text.find("45 came late: reading up to 1142 processes took longer than the interval, or qprof got no "
                      "CPU in time (a busy machine); the curves are coarser than asked there (a longer -i keeps "
                      "samples on time)"),
            std::string::npos)
      << text;
  r.sampling.missed_deadlines = 0;
  EXPECT_EQ(format_summary(r).find("missed"), std::string::npos);
}

}  // namespace
}  // namespace qprof::record::session
