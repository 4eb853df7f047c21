// SPDX-License-Identifier: Apache-2.0
// --watch-dir on a tree of 100 000 files: the walks after the baseline stay within their CPU
// budget. Alone (a serial test): the walk's cost is thread CPU time, but a machine loaded by other
// tests makes every walk longer.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <regex>

#include "e2e_util.hpp"
#include "qprof/analysis/dirs.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using analysis::dir_growths;
using trace::Trace;

namespace {

namespace fs = std::filesystem;
constexpr double kBudgetShare = 0.02;  // DirWatcher::kCpuShare, as the README promises

Result bounded_qprof(const std::vector<std::string>& args, int timeout_s = 120) {
  std::vector<std::string> argv{
      "timeout", "-s", "KILL", std::to_string(timeout_s), "prlimit", as_limit("1073741824"), "--", qprof_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, "", timeout_s + 10);
}

// A tree of 100 000 files made here, watched for a while: the CPU time of the walks after the
// baseline stays within 2 % of a core. The schedule may stretch on a loaded machine; the budget
// may not.
TEST(RunWatch, AHundredThousandFilesStayWithinTheBudget) {
  const std::string tree = temp_dir() + "/big_tree";
  const auto t0 = std::chrono::steady_clock::now();
  for (int d = 0; d < 100; ++d) {
    const std::string sub = tree + "/d" + std::to_string(d);
    fs::create_directories(sub);
    for (int f = 0; f < 1000; ++f) {
      const int fd = ::open((sub + "/f" + std::to_string(f)).c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
      ASSERT_GE(fd, 0);
      ASSERT_EQ(::write(fd, "x", 1), 1);
      ::close(fd);
    }
  }
  const double made_in = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_LT(made_in, 90.0) << "making the tree took too long on this machine";
  // "N walks, every X s on average (asked 1.00 s), C s of CPU: P % of one core; E entries in the
  // last walk; the first, before the command, took F s of CPU"
  const std::regex cost(
      R"(dir walks\s+(\d+) walks?, every ([0-9.]+) s on average \(asked 1\.00 s\), ([0-9.]+) s of CPU: ([0-9.]+) % of one core; (\d+) entr(?:y|ies) in the last walk; the first, before the command, took ([0-9.]+) s of CPU)");
  // The first walk, before the command starts, is the baseline every growth needs: it is taken
  // whatever it costs (about 3 µs a file), and the budget rules the walks after it. The run lasts
  // 60 times a first walk, so that there is room for more walks than the baseline.
  std::smatch m;
  const Result probe =
      bounded_qprof({"run", "-v", "--watch-dir", tree, "-o", temp_dir() + "/big_probe.dat", "--", "true"});
  ASSERT_EQ(probe.status, 0) << probe.err;
  const std::string probe_said = unwrapped(probe.err);  // the summary wraps at 80 columns
  ASSERT_TRUE(std::regex_search(probe_said, m, cost)) << probe.err;
  const double first_walk = std::stod(m[6].str());
  EXPECT_EQ(std::stoul(m[1].str()), 1u) << "a command that ends at once leaves no budget for a second walk";
  EXPECT_DOUBLE_EQ(std::stod(m[3].str()), first_walk) << "one walk: all the CPU is the first's";
  const double seconds = std::max(10.0, 60.0 * first_walk);
  if (seconds > 60)
    GTEST_SKIP() << "a walk of 100 000 files costs " << first_walk << " s of CPU here: too slow a machine to wait for";
  const std::string out = temp_dir() + "/big_tree.dat";
  char sleep_for[32];
  std::snprintf(sleep_for, sizeof sleep_for, "%.1f", seconds);
  const Result r = bounded_qprof({"run", "-v", "--watch-dir", tree, "-o", out, "--", "sleep", sleep_for}, 150);
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  const auto g = dir_growths(t);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].start, 100000u) << "one byte per file";
  const std::string said = unwrapped(r.err);
  ASSERT_TRUE(std::regex_search(said, m, cost)) << r.err;
  EXPECT_EQ(std::stoul(m[5].str()), 100101u) << "the root, 100 directories, 100 000 files";
  const unsigned long walks = std::stoul(m[1].str());
  EXPECT_EQ(walks, g[0].samples) << "one DIR line per walk";
  const double cpu = std::stod(m[3].str()), first = std::stod(m[6].str());
  EXPECT_GT(first, 0.0);
  EXPECT_LE(first, cpu + 1e-3) << "the first walk's CPU is part of the walks' CPU";
  // However often the walks after the first ran, their CPU time is within the budget of the time
  // watched (at least the command's `seconds`). A walk starts only when the walks so far plus one
  // more of the last one's cost stay within the budget since the first walk began, so this holds
  // unless the last walk costs more than the one before it and the first together.
  EXPECT_LT(cpu - first, kBudgetShare * seconds) << r.err;
  if (walks == 1) {
    // No second walk: the budget did not allow one before the command ended. A second walk was
    // due once (2 × first) / 2 % − first had passed: the run must have been shorter than that.
    EXPECT_LT(seconds, 2.0 * first / kBudgetShare - first + 1.0) << r.err;
  }
}

}  // namespace
}  // namespace qprof::test
