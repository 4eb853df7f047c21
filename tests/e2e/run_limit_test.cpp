// SPDX-License-Identifier: Apache-2.0
// The memory limit in force: recorded in the header, said as headroom, a budget relative to it,
// and the 90 % warning in a real cgroup (root with cgroup v1 memory only).
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "e2e_util.hpp"
#include "qprof/analysis/dirs.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using analysis::memory_limit;
using trace::Trace;

namespace {

namespace fs = std::filesystem;
constexpr Bytes kMiB = Bytes{1} << 20;

std::vector<std::string> bounded(const std::string& as_bytes) {
  return {"timeout", "-s", "KILL", "120", "prlimit", as_limit(as_bytes), "--", qprof_bin()};
}

Result bounded_qprof(const std::vector<std::string>& args, const std::string& as_bytes = "1073741824") {
  std::vector<std::string> argv = bounded(as_bytes);
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, "", 130);
}

TEST(RunLimit, TheHeaderRecordsTheTightestLimitAndTheSummaryTheHeadroom) {
  if (sanitized()) GTEST_SKIP() << "the sanitized qprof runs without RLIMIT_AS";
  const std::string out = temp_dir() + "/limit_as.dat";
  const Result r = bounded_qprof({"run", "-v", "-o", out, "--", workload("alloc_tree"), "60", "0", "0", "300"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  const auto limit = memory_limit(t);
  ASSERT_TRUE(limit) << "no limit= in the header";
  // prlimit's 1 GiB, unless a cgroup or Slurm around the tests is tighter still.
  EXPECT_LE(limit->bytes, 1024 * kMiB);
  if (limit->source == "rlimit-as") {
    EXPECT_EQ(limit->bytes, 1024 * kMiB);
  }
  const std::string said = "of the " + limit->source + " limit of ";
  // The headroom on the basis the limit counts: address space for RLIMIT_AS, else the footprint.
  const std::string basis = limit->source == "rlimit-as" ? "VSZ" : "footprint";
  if (limit->source == "memtotal") {
    // The machine's memory is said only where the job comes near it (not "is 0 % of the
    // memtotal limit"; unit.Summary checks that).
    EXPECT_EQ(joined(r.err).find("is 0 %"), std::string::npos) << r.err;
  } else {
    EXPECT_NE(joined(r.err).find("qprof:   limit           " + basis + " "), std::string::npos) << r.err;
    EXPECT_NE(unwrapped(r.err).find(said), std::string::npos) << r.err;
  }
  // report: the facts.
  const Result rep = bounded_qprof({"report", out});
  ASSERT_EQ(rep.status, 0) << rep.err;
  EXPECT_NE(rep.out.find("headroom"), std::string::npos) << rep.out;
  EXPECT_NE(rep.out.find(limit->source), std::string::npos) << rep.out;
  // The headroom is a size with its unit and sign: "+895.3 MiB".
  const std::size_t at = rep.out.find("headroom");
  const std::string headroom_line = rep.out.substr(at, rep.out.find('\n', at) - at);
  EXPECT_NE(headroom_line.find(" +"), std::string::npos) << headroom_line;
  EXPECT_NE(headroom_line.find("iB"), std::string::npos) << headroom_line;
}

TEST(RunLimit, MaxPeakAsAShareOfTheLimit) {
  if (sanitized()) GTEST_SKIP() << "the sanitized qprof runs without RLIMIT_AS";
  const std::string out = temp_dir() + "/limit_budget.dat";
  // 100 MiB against 5 % of 1 GiB (51.2 MiB): over; against 90 %: within.
  Result r =
      bounded_qprof({"run", "--max-peak", "5%", "-o", out, "--", workload("alloc_tree"), "100", "0", "0", "100"});
  EXPECT_EQ(r.status, 3) << r.err;
  EXPECT_NE(joined(r.err).find("memory budget exceeded"), std::string::npos) << r.err;
  r = bounded_qprof({"peak", "--max-peak", "90%", out});
  EXPECT_EQ(r.status, 0) << r.err;
  r = bounded_qprof({"peak", "--max-peak", "5%", out});
  EXPECT_EQ(r.status, 3) << r.err;
  // A trace without a limit (mprof's) cannot take a percentage: a clear error, status 2.
  const std::string mprof = temp_dir() + "/mprof_like.dat";
  std::ofstream(mprof) << "CMDLINE job\nMEM 10.0 1.0\nMEM 20.0 2.0\n";
  r = bounded_qprof({"peak", "--max-peak", "90%", mprof});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(joined(r.err).find("records no memory limit"), std::string::npos) << r.err;
  r = bounded_qprof({"peak", "--max-peak", "90 percent", mprof});
  EXPECT_EQ(r.status, 2) << r.err;
}

// In a cgroup v1 memory group limited to 300 MiB, made here (root only).
class CgroupLimit : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "creating a memory cgroup needs root";
    if (sanitized()) {
      GTEST_SKIP() << "the sanitized qprof (ASan's shadow memory and quarantine) would share the limited group with "
                      "the job and count against its limit";
    }
    if (!fs::exists("/sys/fs/cgroup/memory/cgroup.procs")) GTEST_SKIP() << "no cgroup v1 memory hierarchy here";
    // Below qprof-tests' own cgroup, so that every limit around the tests still holds.
    std::ifstream self("/proc/self/cgroup");
    std::string line, own;
    while (std::getline(self, line)) {
      const auto a = line.find(':'), b = line.find(':', a + 1);
      if (line.substr(a + 1, b - a - 1).find("memory") != std::string::npos) own = line.substr(b + 1);
    }
    group_ = "/sys/fs/cgroup/memory" + own + "/qprof-limit-test-" + std::to_string(::getpid());
    std::error_code ec;
    if (!fs::create_directory(group_, ec)) GTEST_SKIP() << "cannot create " << group_ << ": " << ec.message();
    std::ofstream(group_ + "/memory.limit_in_bytes") << 300 * kMiB;
  }
  void TearDown() override {
    if (!group_.empty()) ::rmdir(group_.c_str());
  }
  Result run_in_group(const std::string& out, const std::string& mib) {
    // The shell joins the group, then becomes qprof: qprof and the job are held by its limit.
    std::string cmd = "echo $$ > " + group_ + "/cgroup.procs && exec";
    for (const std::string& a : bounded("1073741824")) cmd += " '" + a + "'";
    cmd += " run -v -o '" + out + "' -- '" + workload("alloc_tree") + "' " + mib + " 0 0 800";
    return run({"sh", "-c", cmd}, "", 130);
  }
  std::string group_;
};

TEST_F(CgroupLimit, HeadroomIsSaidAndNoWarningBelowNinetyPercent) {
  const std::string out = temp_dir() + "/cg250.dat";
  const Result r = run_in_group(out, "250");
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  const auto limit = memory_limit(t);
  ASSERT_TRUE(limit);
  EXPECT_EQ(limit->bytes, 300 * kMiB);
  EXPECT_EQ(limit->source, "cgroup-v1");
  // "peak 251.3 MiB is 84 % of the cgroup-v1 limit of 300.0 MiB"
  const double share = 100.0 * static_cast<double>(max_mem(t)) / static_cast<double>(300 * kMiB);
  char said[64];
  std::snprintf(said, sizeof said, "is %.0f %% of the cgroup-v1 limit of 300.0 MiB", share);
  EXPECT_NE(unwrapped(r.err).find(said), std::string::npos) << r.err;
  EXPECT_EQ(joined(r.err).find("crossed 90 %"), std::string::npos) << r.err;
}

TEST_F(CgroupLimit, CrossingNinetyPercentIsWarnedOnceDuringTheRun) {
  const std::string out = temp_dir() + "/cg275.dat";
  const Result r = run_in_group(out, "275");  // 275 MiB + the process's own > 270 MiB
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string warning = "crossed 90 % of the cgroup-v1 limit of 300.0 MiB";
  const std::size_t at = joined(r.err).find(warning);
  ASSERT_NE(at, std::string::npos) << r.err;
  EXPECT_EQ(joined(r.err).find(warning, at + 1), std::string::npos) << "once";
  // Said while the job ran: before the job's own "Hold End" marker line reached stderr.
  const std::size_t hold_end = joined(r.err).find("QPROF_MARK: Hold End");
  ASSERT_NE(hold_end, std::string::npos) << r.err;
  EXPECT_LT(at, hold_end) << r.err;
  const Trace t = trace::read_trace(out);
  std::size_t notes = 0;
  for (const std::string& n : t.notes) notes += n.find("crossed 90 %") != std::string::npos ? 1 : 0;
  EXPECT_EQ(notes, 1u);
}

}  // namespace
}  // namespace qprof::test
