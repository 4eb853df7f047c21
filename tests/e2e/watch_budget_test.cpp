// --watch-dir on a tree of 100 000 files: the walks stay within their CPU budget. Alone (a serial
// test): the walk's cost is thread CPU time, but a machine loaded by other tests makes every
// walk, and so the run that must amortise the first one, longer.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <regex>

#include "e2e_util.hpp"
#include "qprof/analysis/analysis.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
namespace {

namespace fs = std::filesystem;
constexpr double kBudgetShare = 0.02;  // DirWatcher::kCpuShare, as the README promises

Result bounded_qprof(const std::vector<std::string>& args, int timeout_s = 120) {
  std::vector<std::string> argv{"timeout", "-s", "KILL", std::to_string(timeout_s), "prlimit", as_limit("1073741824"), "--",
                                qprof_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, "", timeout_s + 10);
}

// A tree of 100 000 files made here, watched for a while: the walks' CPU time stays within 2 %
// of a core. The schedule may stretch on a loaded machine; the budget may not.
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
  // "N walks, every X s on average (asked 1.00 s), C s of CPU: P % of one core; E entries"
  const std::regex cost(R"(dir walks\s+(\d+) walks, every ([0-9.]+) s on average \(asked 1\.00 s\), ([0-9.]+) s of CPU: ([0-9.]+) % of one core; (\d+) entries)");
  // The first walk, before the command starts, is the baseline every growth needs: it costs what
  // it costs (about 3 µs a file on this loaded VM), and the run must be long enough to
  // amortise it. A short run measures that cost; the run checked lasts 60 times as long.
  std::smatch m;
  const Result probe = bounded_qprof({"run", "--watch-dir", tree, "-o", temp_dir() + "/big_probe.dat", "--", "true"});
  ASSERT_EQ(probe.status, 0) << probe.err;
  ASSERT_TRUE(std::regex_search(probe.err, m, cost)) << probe.err;
  const double first_walk = std::stod(m[3].str()) / std::stod(m[1].str());
  const double seconds = std::max(10.0, 60.0 * first_walk);
  if (seconds > 60) GTEST_SKIP() << "a walk of 100 000 files costs " << first_walk << " s of CPU here: too slow a machine to wait for";
  const std::string out = temp_dir() + "/big_tree.dat";
  char sleep_for[32];
  std::snprintf(sleep_for, sizeof sleep_for, "%.1f", seconds);
  const Result r = bounded_qprof({"run", "--watch-dir", tree, "-o", out, "--", "sleep", sleep_for}, 150);
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = dat::read_trace(out);
  const auto g = dir_growths(t);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].start, 100000u) << "one byte per file";
  ASSERT_TRUE(std::regex_search(r.err, m, cost)) << r.err;
  EXPECT_EQ(std::stoul(m[5].str()), 100101u) << "the root, 100 directories, 100 000 files";
  EXPECT_EQ(std::stoul(m[1].str()), g[0].samples) << "one DIR line per walk";
  const double cpu = std::stod(m[3].str()), share = std::stod(m[4].str()) / 100.0;
  EXPECT_GT(cpu, 0.0);
  // However often the walks ran, their CPU time over the run is within the budget.
  EXPECT_LT(share, kBudgetShare) << r.err;
  EXPECT_LT(cpu, kBudgetShare * (seconds + 1.0)) << r.err;
}

}  // namespace
}  // namespace qprof::test
