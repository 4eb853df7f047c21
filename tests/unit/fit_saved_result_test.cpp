// SPDX-License-Identifier: Apache-2.0
// qprof fit's JSON read back beside a trace (sweep --fit, compare --sweep): the two limits, or
// why the file is not fit's.
#include <gtest/gtest.h>

#include <fstream>

#include "qprof/fit/fit.hpp"
#include "qprof/fit/report.hpp"
#include "qprof/fit/saved_result.hpp"
#include "temp_files.hpp"

namespace qprof::fit {
namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = test::unit_temp_file(name);
  std::ofstream(path) << text;
  return path;
}

TEST(FitSavedResult, PathSitsBesideTheTrace) {
  EXPECT_EQ(saved_result_path("sweep/workers=4.dat"), "sweep/workers=4.fit.json");
  EXPECT_EQ(saved_result_path("run.trace"), "run.trace.fit.json");
}

TEST(FitSavedResult, ReadsWhatJsonReportWrote) {
  FitReport r;
  r.findings.runs = Finding{};
  r.findings.runs->limit = 205ull << 20;
  r.findings.full_speed = Finding{};
  r.findings.full_speed->limit = 520ull << 20;
  const auto s = read_saved_limits(write_temp("a.fit.json", json_report(r)));
  ASSERT_TRUE(s) << s.failure().message;
  ASSERT_TRUE(*s);
  EXPECT_EQ((*s)->runs_in, 205ull << 20);
  EXPECT_EQ((*s)->full_speed, 520ull << 20);
  // A search that found no full-speed limit: null in the JSON, none here.
  r.findings.full_speed.reset();
  const auto t = read_saved_limits(write_temp("b.fit.json", json_report(r)));
  ASSERT_TRUE(t) << t.failure().message;
  ASSERT_TRUE(*t);
  EXPECT_FALSE((*t)->full_speed);
}

TEST(FitSavedResult, AMissingFileIsNoneAndADamagedOneSaysWhy) {
  const auto missing = read_saved_limits("/nonexistent/qprof/x.fit.json");
  ASSERT_TRUE(missing) << "a missing file is no failure";
  EXPECT_FALSE(*missing);
  const auto why = [](const Result<std::optional<SavedLimits>>& r) { return r ? std::string() : r.failure().message; };
  const auto c = read_saved_limits(write_temp("c.fit.json", "{\"findings\": 3"));
  EXPECT_NE(why(c).find("c.fit.json: "), std::string::npos) << why(c);
  const auto d = read_saved_limits(write_temp("d.fit.json", "[1, 2]"));
  EXPECT_NE(why(d).find("not qprof fit's JSON"), std::string::npos) << why(d);
  const auto e =
      read_saved_limits(write_temp("e.fit.json", "{\"findings\": {\"smallest_running\": {\"limit_bytes\": -1}}}"));
  EXPECT_NE(why(e).find("not a size"), std::string::npos) << why(e);
}

}  // namespace
}  // namespace qprof::fit
