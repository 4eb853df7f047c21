// SPDX-License-Identifier: Apache-2.0
// What report, plot, compare and export share through common/: one trace has one default label
// everywhere, numbers of any magnitude are whole numbers in the YAML, and no CSV cell holds a raw
// control character. Traces are hostile here: each qprof runs under an address-space limit and
// a deadline.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "e2e_util.hpp"

namespace qprof::test {
namespace {

namespace fs = std::filesystem;

Result bounded_qprof(std::vector<std::string> args) {
  std::vector<std::string> argv = {"prlimit", as_limit("1073741824"), "--", qprof_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, "", 60);
}

void write(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

bool has_control_byte(const std::string& s) {
  for (unsigned char c : s) {
    if ((c < 0x20 && c != '\n') || c == 0x7F) return true;
  }
  return false;
}

TEST(SharedText, OneTraceHasOneLabelInPlotReportCompareAndExport) {
  // plot, report and compare stripped any extension ("run.v2" → "run"), export only ".dat": the
  // rule is now ".dat" only, as mprof names its traces.
  const std::string dir = temp_dir() + "/labels";
  fs::create_directories(dir);
  const std::string a = dir + "/run.v2", b = dir + "/other.dat";
  fs::copy_file(data_file("plot/full.dat"), a);
  fs::copy_file(data_file("plot/full.dat"), b);

  const Result plot = bounded_qprof({"plot", a, b, "-o", dir + "/c.svg", "--script", dir + "/c.gp"});
  ASSERT_EQ(plot.status, 0) << plot.err;
  EXPECT_NE(read_file(dir + "/c.gp").find("\"run.v2"), std::string::npos) << "plot's key";

  const Result ranks = bounded_qprof({"report", "--sum", a, b, "--format", "csv", "--table", "ranks"});
  ASSERT_EQ(ranks.status, 0) << ranks.err;
  EXPECT_NE(ranks.out.find("\nrun.v2,"), std::string::npos) << ranks.out;

  const Result compare = bounded_qprof({"compare", a, b, "--format", "csv"});
  ASSERT_EQ(compare.status, 0) << compare.err;
  EXPECT_NE(compare.out.find("\nrun.v2,"), std::string::npos) << compare.out;

  const Result exported = bounded_qprof({"export", a, b, "--format", "json"});
  ASSERT_EQ(exported.status, 0) << exported.err;
  EXPECT_EQ(nlohmann::json::parse(exported.out)["traces"][0]["label"], "run.v2");
}

TEST(SharedText, HugeTimesAreWholeNumbersInTheYaml) {
  // fixed() cut 1e57 and more at a 64-byte buffer and wrote the stack's bytes after it.
  const std::string dir = temp_dir() + "/huge";
  fs::create_directories(dir);
  // The latest time a trace holds (the reader refuses 1e10 s and later, 1e300 among them).
  write(dir + "/t.dat", "CMDLINE x\nMEM 1 0\nMARK 0 Load Start\nMARK 9999999999 Load End\nMEM 2 9999999999\n");
  const Result r = bounded_qprof({"report", "--yaml", dir + "/t.yaml", dir + "/t.dat"});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string yaml = read_file(dir + "/t.yaml");
  EXPECT_FALSE(has_control_byte(yaml));
  const Result py =
      run({debian_python(), "-c",
           "import sys, yaml\nd = yaml.safe_load(open(sys.argv[1]))\n"
           "assert d['total_quantization_time_seconds'] == 9999999999, d['total_quantization_time_seconds']\n"
           "s = d['qprof']['stages'][0]\n"
           "assert s['duration_secs'] == 9999999999, s\n",
           dir + "/t.yaml"});
  EXPECT_EQ(py.status, 0) << py.err << yaml.substr(0, 2000);
  write(dir + "/far.dat", "CMDLINE x\nMEM 1 0\nMARK 0 Load Start\nMARK 1e300 Load End\nMEM 2 1e300\n");
  const Result far = bounded_qprof({"report", "--yaml", dir + "/far.yaml", dir + "/far.dat"});
  EXPECT_EQ(far.status, 2) << far.err;
  EXPECT_NE(joined(far.err).find("far.dat:4: MARK: time 1e+300 is after 2286"), std::string::npos) << far.err;
  EXPECT_FALSE(fs::exists(dir + "/far.yaml"));
}

TEST(SharedText, CsvCellsHoldNoRawControlCharacter) {
  const std::string dir = temp_dir() + "/esc";
  fs::create_directories(dir);
  const std::string trace = dir + "/t.dat";
  write(trace, "MEM 10 1\nMARK 10.5 \x1b[31mred Start\nMEM 20 2\nMARK 20.5 \x1b[31mred End\n");
  const Result report = bounded_qprof({"report", "--format", "csv", trace});
  ASSERT_EQ(report.status, 0) << report.err;
  EXPECT_FALSE(has_control_byte(report.out)) << report.out;
  EXPECT_NE(report.out.find("\n\\x1b[31mred,"), std::string::npos) << report.out;

  const Result exported = bounded_qprof({"export", trace, trace, "--label", "=cmd\x1b[2J,b", "--format", "csv"});
  ASSERT_EQ(exported.status, 0) << exported.err;
  EXPECT_FALSE(has_control_byte(exported.out)) << exported.out;
  EXPECT_NE(exported.out.find("\n'=cmd\\x1b[2J,"), std::string::npos) << exported.out;
}

}  // namespace
}  // namespace qprof::test
