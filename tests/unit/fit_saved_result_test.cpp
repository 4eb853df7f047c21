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

// Writes `text` into the test's own file and gives its path.
const std::string& written(const test::RemovedTempFile& file, const std::string& text) {
  std::ofstream(file.path()) << text;
  return file.path();
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
  const test::RemovedTempFile a_file("a.fit.json"), b_file("b.fit.json");
  const auto s = read_saved_limits(written(a_file, json_report(r)));
  ASSERT_TRUE(s) << s.failure().message;
  ASSERT_TRUE(*s);
  EXPECT_EQ((*s)->runs_in, 205ull << 20);
  EXPECT_EQ((*s)->full_speed, 520ull << 20);
  // A search that found no full-speed limit: null in the JSON, none here.
  r.findings.full_speed.reset();
  const auto t = read_saved_limits(written(b_file, json_report(r)));
  ASSERT_TRUE(t) << t.failure().message;
  ASSERT_TRUE(*t);
  EXPECT_FALSE((*t)->full_speed);
}

TEST(FitSavedResult, AMissingFileIsNoneAndADamagedOneSaysWhy) {
  const auto missing = read_saved_limits("/nonexistent/qprof/x.fit.json");
  ASSERT_TRUE(missing) << "a missing file is no failure";
  EXPECT_FALSE(*missing);
  const auto why = [](const Result<std::optional<SavedLimits>>& r) { return r ? std::string() : r.failure().message; };
  const test::RemovedTempFile c_file("c.fit.json"), d_file("d.fit.json"), e_file("e.fit.json");
  const auto c = read_saved_limits(written(c_file, "{\"findings\": 3"));
  EXPECT_NE(why(c).find("c.fit.json: "), std::string::npos) << why(c);
  const auto d = read_saved_limits(written(d_file, "[1, 2]"));
  EXPECT_NE(why(d).find("not qprof fit's JSON"), std::string::npos) << why(d);
  const auto e = read_saved_limits(written(e_file, "{\"findings\": {\"smallest_running\": {\"limit_bytes\": -1}}}"));
  EXPECT_NE(why(e).find("not a size"), std::string::npos) << why(e);
}

}  // namespace
}  // namespace qprof::fit
