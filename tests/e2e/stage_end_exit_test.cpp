// SPDX-License-Identifier: Apache-2.0
// A stage that ends just before the job exits: the job holds 60 MiB at the stage's start, touches
// 40 MiB more, marks its End and exits at once. A marker line on stderr is read after it was
// written, and the job may be freeing its memory by then; a synchronous checkpoint (qprof_mark's
// mark(), as docs/recording.md advises for a last stage) returns once qprof has read the tree. With
// it, "at end" is the tree's memory at the End (about 40 MiB above "at start"), and the stage's
// delta and its Σ RSS growth (memory_growth in JSON) agree, run after run: on the tree's cgroup, on Σ PSS
// as root, and as an ordinary user.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "doc_files.hpp"
#include "e2e_util.hpp"
#include "qprof/analysis/bottleneck.hpp"
#include "qprof/analysis/peaks.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
namespace {
using analysis::Metric;
using analysis::StageStats;

constexpr double kGrownMiB = 40;

enum class Path { cgroup, pss_root, pss_nobody };

const char* const kJob =
    "import sys, time\n"
    "import qprof_mark\n"  // imported before the stage: its modules are not the stage's growth
    "def touch(n):\n"
    "    b = bytearray(n << 20)\n"
    "    for i in range(0, len(b), 4096): b[i] = 1\n"
    "    return b\n"
    "a = touch(60)\n"
    "print('QPROF_MARK: Grow Start', file=sys.stderr, flush=True)\n"
    "time.sleep(0.1)\n"  // "at start" is read before the growth
    "b = touch(40)\n"
    "time.sleep(0.3)\n"
    "qprof_mark.mark('Grow End')\n";

trace::Trace record(Path path, int run_index, std::string& text) {
  std::vector<std::string> argv;
  std::string dir = temp_dir();
  const std::string module = copy_for_other_users((source_dir() / "python" / "qprof_mark.py").string());
  const std::string python_path = "PYTHONPATH=" + std::filesystem::path(module).parent_path().string();
  if (path == Path::pss_nobody) {
    dir = std::filesystem::path(copy_for_other_users(qprof_bin())).parent_path().string();
    argv = {"runuser", "-u", "nobody", "--", "env", "-C", "/", python_path, dir + "/qprof", "run"};
  } else {
    argv = {"env", python_path, qprof_bin(), "run", "--cgroup", path == Path::cgroup ? "on" : "off"};
  }
  const std::string out =
      dir + "/stage_end_" + std::to_string(static_cast<int>(path)) + "_" + std::to_string(run_index) + ".dat";
  for (const std::string& a : {std::string("-q"), std::string("-o"), out, std::string("--"), std::string("sh"),
                               std::string("-c"), debian_python() + " -c \"$0\"", std::string(kJob)}) {
    argv.push_back(a);
  }
  const Result r = run(argv);
  EXPECT_EQ(r.status, 0) << r.err;
  text = read_file(out);
  // What came after the stage's start, to see on a failure.
  if (const auto at = text.find("MARK "); at != std::string::npos) text = text.substr(at);
  return trace::read_trace(out);
}

void expect_end_read_before_the_exit(Path path) {
  if (geteuid() != 0) GTEST_SKIP() << "--cgroup and runuser need root";
  for (int i = 0; i < 5; ++i) {
    std::string text;
    const trace::Trace t = record(path, i, text);
    if (path == Path::cgroup && t.cgroup.empty()) GTEST_SKIP() << "no cgroup with a memory controller here";
    const std::vector<StageStats> rss = analysis::stage_stats(t, Metric::rss);
    ASSERT_EQ(rss.size(), 1u) << "run " << i;
    ASSERT_TRUE(rss[0].at_start && rss[0].at_end) << "run " << i;
    for (const Metric m : {Metric::footprint, Metric::rss}) {
      const std::vector<StageStats> stats = m == Metric::rss ? rss : analysis::stage_stats(t, m);
      ASSERT_EQ(stats.size(), 1u) << "run " << i;
      ASSERT_TRUE(stats[0].at_start && stats[0].at_end) << "run " << i;
      const double delta = mib(*stats[0].at_end) - mib(*stats[0].at_start);
      // Σ PSS moves with processes outside the tree that share the interpreter's file pages: the
      // tree's share can rise by at most what others held at the start (RSS − PSS then) and fall by
      // at most what they hold at the end.
      const bool pss = m == Metric::footprint && path != Path::cgroup;
      const double rise = pss ? mib(*rss[0].at_start) - mib(*stats[0].at_start) : 0;
      const double fall = pss ? mib(*rss[0].at_end) - mib(*stats[0].at_end) : 0;
      const std::string_view name = analysis::metric_info(m).name;
      EXPECT_GE(delta, kGrownMiB - 4 - fall) << "run " << i << ", " << name << "\n" << text;
      EXPECT_LE(delta, kGrownMiB + 4 + rise) << "run " << i << ", " << name << "\n" << text;
    }
    const auto b = analysis::stage_bottlenecks(t);
    ASSERT_EQ(b.size(), 1u);
    ASSERT_TRUE(b[0].memory_growth);
    EXPECT_GE(static_cast<double>(*b[0].memory_growth) / (1 << 20), kGrownMiB - 4) << "run " << i;
  }
}

TEST(StageEndExit, OnTheTreesCgroup) { expect_end_read_before_the_exit(Path::cgroup); }
TEST(StageEndExit, OnPssAsRoot) { expect_end_read_before_the_exit(Path::pss_root); }
TEST(StageEndExit, OnPssAsAnOrdinaryUser) { expect_end_read_before_the_exit(Path::pss_nobody); }

}  // namespace
}  // namespace qprof::test
