// SPDX-License-Identifier: Apache-2.0
// A run's trend on jobs of a known shape (tests/workloads/trend_job.c): a job that grows 20 MiB/s
// for 5 s (the 10 MiB/s for 20 s, shortened to keep the suite fast: the same growth
// of 100 MiB, at twice the rate) is said with its slope; a flat job, a step and a single spike are
// not; the stage table fits each stage on its own.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

#include "e2e_util.hpp"

namespace qprof::test {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kRate = 20 * kMiB;  // trend_job's growth, paced by the clock

// qprof run on trend_job SHAPE 5 under a 1 GiB address-space limit (the job holds 460 MiB at
// most) and a 60 s timeout; the trace's path.
std::string run_shape(const std::string& shape, Result& r) {
  const std::string out = temp_dir() + "/trend_" + shape + ".dat";
  r = run(
      {"prlimit", as_limit("1073741824"), "--", qprof_bin(), "run", "-o", out, "--", workload("trend_job"), shape, "5"},
      "", 60);
  EXPECT_EQ(r.status, 0) << r.err;
  return out;
}

nlohmann::json report_json(const std::string& trace) {
  const Result r = qprof({"report", "--format", "json", trace});
  EXPECT_EQ(r.status, 0) << r.err;
  return nlohmann::json::parse(r.out);
}

TEST(RunTrend, AGrowingJobIsSaidWithItsSlope) {
  Result r;
  const std::string trace = run_shape("grow", r);
  EXPECT_NE(joined(r.err).find("qprof:   trend           \u03a3 RSS grows "), std::string::npos) << r.err;
  const auto j = report_json(trace);
  EXPECT_NEAR(j["trend_rss_slope_bytes_per_s"].get<double>(), kRate, 0.05 * kRate);
  EXPECT_TRUE(j["trend_rss_significant"].get<bool>());
  EXPECT_GE(j["trend_rss_r2"].get<double>(), 0.95);
  // The steady part: the first quarter (start-up) and the last 5 % of the time left out.
  EXPECT_GT(j["trend_rss_from_s"].get<double>(), 0.2);
  EXPECT_NE(j["trend_rss"].get<std::string>().find("grows"), std::string::npos);
  const Result text = qprof({"report", trace});
  EXPECT_NE(text.out.find("trend of \u03a3 RSS"), std::string::npos) << text.out;
  // The YAML keeps it under qprof's own keys.
  const Result yaml = qprof({"report", "--yaml", "-", trace});
  const YAML::Node y = YAML::Load(yaml.out);
  EXPECT_TRUE(y["qprof"]["trend"]["rss"]["significant"].as<bool>());
  EXPECT_NEAR(y["qprof"]["trend"]["rss"]["slope_mb_per_min"].as<double>(), 20 * 60, 0.05 * 20 * 60);
}

TEST(RunTrend, PlotTrendDrawsTheFittedLine) {
  Result r;
  const std::string trace = run_shape("grow", r);
  const std::string dir = temp_dir();
  const Result p = qprof({"plot", "--trend", trace, "-o", dir + "/grow.svg", "--script", dir + "/grow.gp"});
  ASSERT_EQ(p.status, 0) << p.err;
  const std::string script = read_file(dir + "/grow.gp");
  EXPECT_NE(script.find("ls 27"), std::string::npos) << script;
  EXPECT_NE(script.find("title \"trend of \u03a3 RSS +"), std::string::npos) << script;
  EXPECT_NE(script.find(" MiB/s (R\u00b2 "), std::string::npos) << script;
  EXPECT_EQ(joined(p.err).find("not drawn"), std::string::npos) << p.err;
  // Without --trend, no such line.
  const Result plain = qprof({"plot", trace, "-o", dir + "/plain.svg", "--script", dir + "/plain.gp"});
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_EQ(read_file(dir + "/plain.gp").find("ls 27"), std::string::npos);
}

// A flat run has no line worth drawing (R² near 0): --trend draws none and says so, rather than
// leave the user to wonder whether the option was taken.
TEST(RunTrend, PlotTrendSaysWhyItDrawsNoLine) {
  Result r;
  const std::string trace = run_shape("flat", r);
  const std::string dir = temp_dir();
  const Result p = qprof({"plot", "--trend", trace, "-o", dir + "/flat.svg", "--script", dir + "/flat.gp"});
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_EQ(read_file(dir + "/flat.gp").find("ls 27"), std::string::npos);
  EXPECT_NE(joined(p.err).find("trend_flat.dat: trend of \u03a3 RSS not drawn: a line explains little of it (R\u00b2 "),
            std::string::npos)
      << p.err;
}

TEST(RunTrend, FlatStepAndSpikeSayNoLeak) {
  for (const std::string shape : {"flat", "step", "spike"}) {
    Result r;
    const std::string trace = run_shape(shape, r);
    EXPECT_EQ(joined(r.err).find("trend  "), std::string::npos) << shape << ": " << r.err;
    const auto j = report_json(trace);
    EXPECT_FALSE(j["trend_rss_significant"].get<bool>()) << shape;
    EXPECT_FALSE(j.contains("trend_rss")) << shape;
  }
}

TEST(RunTrend, EachStageHasItsOwnSlope) {
  Result r;
  const std::string trace = run_shape("staged", r);
  const auto j = report_json(trace);
  ASSERT_EQ(j["stages"].size(), 2u) << j.dump();
  const auto& load = j["stages"][0];
  const auto& leak = j["stages"][1];
  EXPECT_EQ(load["stage"], "Load");
  EXPECT_EQ(leak["stage"], "Leak");
  // Load touches its 60 MiB at once, then holds it: flat once its start-up is left out.
  EXPECT_NEAR(load["slope_bytes_per_s"].get<double>(), 0, 1 * kMiB);
  EXPECT_FALSE(load["slope_significant"].get<bool>());
  EXPECT_NEAR(leak["slope_bytes_per_s"].get<double>(), kRate, 0.05 * kRate);
  // The stage table under the summary says it in words.
  EXPECT_NE(joined(r.err).find(" MiB/s (R\u00b2 "), std::string::npos) << r.err;
}

}  // namespace
}  // namespace qprof::test
