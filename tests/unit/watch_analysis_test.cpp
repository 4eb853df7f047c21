// SPDX-License-Identifier: Apache-2.0
// DIR/DIRDEF lines and the limit header through the reader and writer, and what analysis and
// the reports make of them: dir:NAME metrics, Quark's growth, --max-peak 90%.
#include <gtest/gtest.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>

#include "qprof/analysis/metric.hpp"
#include "qprof/analysis/dirs.hpp"
#include "qprof/analysis/peaks.hpp"
#include "qprof/report/quark_yaml.hpp"
#include "qprof/report/report.hpp"
#include "qprof/trace/format.hpp"
#include "temp_files.hpp"

namespace qprof::test {
using analysis::available_metrics;
using analysis::budget_bytes;
using analysis::dir_growths;
using analysis::find_peak;
using analysis::has_metric;
using analysis::memory_limit;
using analysis::metric_info;
using analysis::metric_names;
using analysis::MetricKind;
using analysis::parse_metric;
using analysis::parse_percent;
using analysis::peak_dir_growth;
using trace::DirSample;
using trace::Trace;
using trace::WatchedDir;

namespace {

constexpr Bytes kMiB = Bytes{1} << 20;

const char* kTrace =
    "QPROF 1 version=x interval=0.010000 host=h root_pid=1 start=100.000000 metric=rss limit=314572800 "
    "limit_source=cgroup-v1\n"
    "CMDLINE job\n"
    "DIRDEF 0 /tmp/work/cache\n"
    "DIRDEF 1 /data/tmp\\x20dir\n"
    "DIR 100.000000 0 1048576 1052672 5000000000\n"
    "DIR 100.000000 1 0 0 6000000000\n"
    "MEM 10.0 100.0100\n"
    "MEM 250.0 101.0000\n"
    "DIR 101.000000 0 53477376 53481472 4947000000\n"
    "DIR 101.000000 1 2097152 2101248 5990000000\n"
    "MEM 12.0 102.0000\n"
    "DIR 102.000000 0 1048576 1052672 5000000000\n"
    "DIR 102.000000 1 2097152 2101248 5990000000\n";

Trace trace() { return trace::read_trace_text(kTrace, "t.dat"); }

TEST(WatchTrace, DirLinesRoundTripThroughTheWriter) {
  const Trace t = trace();
  ASSERT_EQ(t.dirs.size(), 2u);
  EXPECT_EQ(t.dirs[1].path, "/data/tmp dir");
  ASSERT_EQ(t.dir_samples.size(), 6u);
  EXPECT_EQ(t.dir_samples[2].apparent, 51 * kMiB);
  const std::string path = unit_temp_file("watch_roundtrip.dat");
  {
    trace::Writer w(path);
    w.header(t.meta);
    for (const WatchedDir& d : t.dirs) w.dir_def(d);
    for (const DirSample& s : t.dir_samples) w.dir(s);
    w.mem(100.5, 10 * kMiB);
    w.flush();
  }
  const Trace back = trace::read_trace(path);
  std::filesystem::remove(path);
  ASSERT_EQ(back.dirs.size(), 2u);
  EXPECT_EQ(back.dirs[1].path, "/data/tmp dir");
  ASSERT_EQ(back.dir_samples.size(), 6u);
  EXPECT_EQ(back.dir_samples[2].allocated, t.dir_samples[2].allocated);
  EXPECT_EQ(back.dir_samples[5].fs_free, 5990000000u);
  EXPECT_EQ(back.meta.other.at("limit"), "314572800");
}

TEST(WatchTrace, ABadDirLineIsFileAndLine) {
  try {
    trace::read_trace_text("QPROF 1 version=x\nMEM 1.0 1.0\nDIR 1.0 0 -5 0 0\n", "bad.dat");
    FAIL() << "accepted a negative size";
  } catch (const trace::ParseError& e) {
    EXPECT_EQ(e.line(), 3u) << e.what();
  }
}

TEST(WatchAnalysis, DirMetricsByPathOrLastComponent) {
  const Trace t = trace();
  const auto by_name = parse_metric("dir:cache");
  ASSERT_TRUE(by_name);
  EXPECT_EQ(by_name->kind, MetricKind::dir);
  EXPECT_EQ(metric_info(*by_name).name, "dir:cache");
  ASSERT_TRUE(has_metric(t, *by_name));
  EXPECT_EQ(find_peak(t, *by_name)->bytes, 51 * kMiB);
  EXPECT_EQ(*find_peak(t, *by_name)->t, 101.0);
  const auto by_path = parse_metric("dir:/data/tmp dir");
  EXPECT_EQ(find_peak(t, *by_path)->bytes, 2 * kMiB);
  EXPECT_FALSE(has_metric(t, *parse_metric("dir:nothing")));
  // available_metrics lists them, so that reports and errors name them.
  const std::string names = metric_names(available_metrics(t));
  EXPECT_NE(names.find("dir:cache"), std::string::npos) << names;
  EXPECT_NE(names.find("dir:tmp dir"), std::string::npos) << names;
}

TEST(WatchAnalysis, GrowthIsQuarksLargestGrowthOverTheStart) {
  const Trace t = trace();
  const auto g = dir_growths(t);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].start, 1 * kMiB);
  EXPECT_EQ(g[0].growth, 50 * kMiB);
  EXPECT_EQ(g[0].last, 1 * kMiB);
  EXPECT_EQ(g[1].growth, 2 * kMiB);  // from an empty (absent) start
  EXPECT_EQ(*peak_dir_growth(t), 50 * kMiB);
  EXPECT_FALSE(peak_dir_growth(trace::read_trace_text("MEM 1.0 1.0\n", "m.dat")));
}

TEST(WatchAnalysis, BudgetAsAShareOfTheRecordedLimit) {
  const Trace t = trace();
  const auto limit = memory_limit(t);
  ASSERT_TRUE(limit);
  EXPECT_EQ(limit->bytes, 300 * kMiB);
  EXPECT_EQ(limit->source, "cgroup-v1");
  EXPECT_EQ(*budget_bytes("90%", t), 270 * kMiB);
  EXPECT_EQ(*budget_bytes("1GiB", t), 1024 * kMiB);
  const Trace mprof = trace::read_trace_text("CMDLINE x\nMEM 1.0 1.0\n", "mprof.dat");
  const auto no_limit = budget_bytes("90%", mprof);
  ASSERT_FALSE(no_limit);
  EXPECT_NE(no_limit.failure().message.find("no memory limit"), std::string::npos) << no_limit.failure().message;
  EXPECT_FALSE(parse_percent("abc%"));
  EXPECT_FALSE(parse_percent("-5%"));
  EXPECT_DOUBLE_EQ(*parse_percent("12.5%"), 0.125);
}

TEST(WatchReport, YamlHasQuarksKeyAndTheDirectoriesAndTheLimit) {
  const YAML::Node y = YAML::Load(report::quark_yaml(trace()));
  EXPECT_DOUBLE_EQ(y["peak_cache_dir_disk_usage_mb"].as<double>(), 50.0);
  const YAML::Node dirs = y["qprof"]["watched_dirs"];
  ASSERT_EQ(dirs.size(), 2u);
  EXPECT_EQ(dirs[1]["path"].as<std::string>(), "/data/tmp dir");
  EXPECT_DOUBLE_EQ(dirs[0]["growth_mb"].as<double>(), 50.0);
  EXPECT_DOUBLE_EQ(y["qprof"]["memory_limit"]["mb"].as<double>(), 300.0);
  EXPECT_EQ(y["qprof"]["memory_limit"]["source"].as<std::string>(), "cgroup-v1");
  for (const auto& m : y["missing"]) EXPECT_NE(m.as<std::string>(), "peak_cache_dir_disk_usage_mb");
  // Without watched directories the key is left out, as Quark leaves it (None) when it watched none.
  EXPECT_FALSE(YAML::Load(report::quark_yaml(
      trace::read_trace_text("QPROF 1 version=x\nMEM 1.0 1.0\n", "m.dat")))["peak_cache_dir_disk_usage_mb"]);
}

TEST(WatchReport, ReportHasTheLimitFactsAndADirectoryTable) {
  const report::Document d = report::trace_report(trace());
  bool limit = false, headroom = false;
  for (const auto& f : d.facts) {
    limit = limit || f.column.key == "limit";
    if (f.column.key == "headroom") {
      headroom = true;
      EXPECT_DOUBLE_EQ(*f.cell.value, 50.0 * 1048576.0);
    }
  }
  EXPECT_TRUE(limit);
  EXPECT_TRUE(headroom);
  bool table = false;
  for (const auto& t : d.tables) table = table || t.name == "watched_dirs";
  EXPECT_TRUE(table);
  EXPECT_EQ(d.tables[d.csv_table].name, "stages") << "CSV still holds the stage table";
}

}  // namespace
}  // namespace qprof::test
