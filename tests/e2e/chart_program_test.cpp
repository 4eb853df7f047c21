// SPDX-License-Identifier: Apache-2.0
// A chart asked of fit, sweep or compare is drawn by gnuplot: where it is missing, the command
// says so (naming the package) before any run and before any table, not after minutes of runs.
#include <gtest/gtest.h>

#include <filesystem>

#include "e2e_util.hpp"

namespace qprof::test {
namespace {

namespace fs = std::filesystem;

// qprof with a PATH that holds no gnuplot: the commands below name their programs by path.
Result without_gnuplot(const std::string& dir, std::vector<std::string> args) {
  fs::create_directories(dir + "/empty-path");
  std::vector<std::string> argv = {"/usr/bin/env", "PATH=" + dir + "/empty-path", qprof_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, "", 60);
}

void expect_refused_first(const Result& r, const std::string& ran) {
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(r.out, "") << "no table before the refusal";
  EXPECT_NE(
      joined(r.err).find("--plot draws with gnuplot, and there is no 'gnuplot' on PATH: install the Debian package "
                         "gnuplot-nox"),
      std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(ran)) << "the command ran before the refusal";
}

TEST(ChartProgram, FitSweepAndCompareRefuseBeforeAnyRun) {
  const std::string dir = fresh_dir("chart_program");
  const std::string ran = dir + "/ran";
  expect_refused_first(without_gnuplot(dir, {"fit", "--plot", dir + "/fit.png", "--", "/usr/bin/touch", ran}), ran);
  expect_refused_first(without_gnuplot(dir, {"sweep", "-d", dir + "/sweep", "-p", "n=1,2", "--plot", dir + "/s.png",
                                             "--", "/usr/bin/touch", ran + "{n}"}),
                       ran + "1");
  expect_refused_first(
      without_gnuplot(dir, {"compare", "--run", "/usr/bin/touch " + ran, "-o", dir + "/cmp", "--plot", dir + "/c.png"}),
      ran);
  // Traces alone: no run, and no table printed before the refusal.
  const std::string minmax = data_file("mprof/func.dat");
  expect_refused_first(without_gnuplot(dir, {"compare", minmax, minmax, "--plot", dir + "/c.svg"}), ran);
  expect_refused_first(without_gnuplot(dir, {"compare", minmax, minmax, "--plot", "-"}), ran);
  EXPECT_TRUE(fs::is_empty(dir + "/empty-path"));
  for (const char* chart : {"fit.png", "s.png", "c.png", "c.svg"}) EXPECT_FALSE(fs::exists(dir + "/" + chart));
}

}  // namespace
}  // namespace qprof::test
