// SPDX-License-Identifier: Apache-2.0
// The disk panel (--watch-dir: each directory's size, and its file system's free space when it
// shares the scale) and the memory limit in force as a dashed line of the memory panel, written
// instead of drawn when it would flatten the chart. Through the chart model and the gnuplot
// program, without running gnuplot.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "qprof/plot/chart.hpp"
#include "qprof/plot/reduce.hpp"
#include "qprof/plot/script.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::plot {
using trace::DirSample;
using trace::TraceMeta;
using trace::WatchedDir;

namespace {

constexpr Bytes kMiB = Bytes{1} << 20;

// A 10 s run: memory rising to 80 MiB, one watched directory growing to 50 MiB on a file system
// whose free space falls from `free_start` by the same amount; the header's limit as given.
TraceData recorded(Bytes limit, Bytes free_start) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("qprof-unit-" + std::to_string(getpid()) + "-disk.dat")).string();
  {
    trace::Writer w(path);
    TraceMeta meta;
    meta.format_version = 1;
    meta.qprof_version = "0.1.0";
    meta.metric = "rss";
    meta.interval = 0.01;
    meta.root_pid = 7;
    meta.start = 1000.0;
    if (limit > 0) {
      meta.other["limit"] = std::to_string(limit);
      meta.other["limit_source"] = "cgroup-v2";
    }
    w.header(meta);
    w.cmdline("python3 calibrate.py --cache-dir /scratch/cache");
    w.dir_def(WatchedDir{0, "/scratch/cache"});
    for (int i = 0; i <= 10; ++i) {
      const double t = 1000.0 + i;
      w.mem(t, Bytes(8 * i) * kMiB);
      w.dir(DirSample{t, 0, Bytes(5 * i) * kMiB, Bytes(5 * i) * kMiB + 4096, free_start - Bytes(5 * i) * kMiB});
    }
    w.flush();
  }
  TraceData d = *reduce_file(path, {});
  std::filesystem::remove(path);
  return d;
}

const ChartSeries* with_role(const ChartPanel& p, Role r) {
  const auto it = std::find_if(p.series.begin(), p.series.end(), [r](const ChartSeries& s) { return s.role == r; });
  return it == p.series.end() ? nullptr : &*it;
}

double top_of(const ChartSeries& s) {
  double top = 0;
  for (const Point& p : s.data) top = std::max(top, p.v);
  return top;
}

TEST(PlotDisk, SizesAndTheFreeSpaceOfASmallFileSystem) {
  const TraceData d = recorded(0, 80 * kMiB);
  PlotOptions o;
  o.panels = {Panel::memory, Panel::disk};
  const Chart c = *build_chart({{&d, "run"}}, o, Format::png, 1280, 900);
  ASSERT_EQ(c.panels.size(), 2u);
  const ChartPanel& disk = c.panels[1];
  EXPECT_EQ(disk.ylabel, "disk (MiB)");
  const ChartSeries* size = with_role(disk, Role::dir_size);
  ASSERT_NE(size, nullptr);
  EXPECT_EQ(size->title, "/scratch/cache, peak 50.0 MiB");
  EXPECT_NEAR(top_of(*size), 50.0, 1e-9);
  EXPECT_FALSE(size->dashed);
  // 80 MiB free at most, down to 30: on the sizes' scale, so drawn, dashed, in the same colour.
  const ChartSeries* free = with_role(disk, Role::dir_free);
  ASSERT_NE(free, nullptr);
  EXPECT_EQ(free->title, "/scratch/cache: free space of its file system");
  EXPECT_TRUE(free->dashed);
  EXPECT_EQ(free->color, size->color);
  EXPECT_NEAR(top_of(*free), 80.0, 1e-9);
  EXPECT_GE(disk.ymax, 80.0);
  // And gnuplot is given both, with their titles as string literals.
  const std::string gp = write_script(c, {}, OutputTarget::fd3).commands();
  EXPECT_NE(gp.find("title \"/scratch/cache, peak 50.0 MiB\""), std::string::npos) << gp;
  EXPECT_NE(gp.find("title \"/scratch/cache: free space of its file system\""), std::string::npos) << gp;
}

TEST(PlotDisk, AFreeSpaceFarAboveTheSizesIsWrittenInTheKey) {
  const TraceData d = recorded(0, Bytes{2} << 40);  // 2 TiB free: GiB, the largest unit of a chart
  PlotOptions o;
  o.panels = {Panel::disk};
  const Chart c = *build_chart({{&d, "run"}}, o, Format::png, 1280, 600);
  const ChartPanel& disk = c.panels.at(0);
  EXPECT_EQ(with_role(disk, Role::dir_free), nullptr);
  const ChartSeries* size = with_role(disk, Role::dir_size);
  ASSERT_NE(size, nullptr);
  EXPECT_NE(size->title.find("(fs free ≥ 2048.0 GiB)"), std::string::npos) << size->title;
  EXPECT_LT(disk.ymax, 100.0);  // the scale is the sizes'
}

TEST(PlotLimit, ALimitNearTheTreeIsADashedLine) {
  const TraceData d = recorded(100 * kMiB, 80 * kMiB);
  PlotOptions o;
  o.panels = {Panel::memory};
  const Chart c = *build_chart({{&d, "run"}}, o, Format::png, 1280, 600);
  const ChartSeries* limit = with_role(c.panels.at(0), Role::limit);
  ASSERT_NE(limit, nullptr);
  EXPECT_EQ(limit->title, "cgroup-v2 limit 100.0 MiB");
  EXPECT_TRUE(limit->dashed);
  ASSERT_EQ(limit->data.size(), 2u);
  EXPECT_NEAR(limit->data[0].v, 100.0, 1e-9);
  EXPECT_NEAR(limit->data[1].v, 100.0, 1e-9);
  EXPECT_GE(c.panels[0].ymax, 100.0);
}

TEST(PlotLimit, ALimitFarAboveTheTreeIsWrittenNotDrawn) {
  const TraceData d = recorded(Bytes{64} << 30, 80 * kMiB);  // 64 GiB against 80 MiB
  PlotOptions o;
  o.panels = {Panel::memory};
  const Chart c = *build_chart({{&d, "run"}}, o, Format::png, 1280, 600);
  EXPECT_EQ(with_role(c.panels.at(0), Role::limit), nullptr);
  EXPECT_LT(c.panels[0].ymax, 200.0) << "the chart keeps the tree's scale";
  const bool noted = std::any_of(c.notes.begin(), c.notes.end(), [](const std::string& n) {
    return n.find("cgroup-v2 limit 64.0 GiB (off the chart)") != std::string::npos;
  });
  EXPECT_TRUE(noted);
}

}  // namespace
}  // namespace qprof::plot
