// SPDX-License-Identifier: Apache-2.0
// qprof under a real single-node Slurm (tests/slurm/slurm-up, started by the CTest fixture
// "slurm"): srun and sbatch with --mem, so that task/cgroup makes the step's memory cgroup with
// the limit, as on a cluster. Skipped, with slurm-up's reason, where Slurm could not start.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>

#include "e2e_util.hpp"
#include "qprof/analysis/dirs.hpp"
#include "qprof/trace/footprint.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
namespace {

namespace fs = std::filesystem;
constexpr Bytes kMiB = Bytes{1} << 20;

std::string slurm_dir() { return QPROF_TEST_SLURM_DIR; }

// Why the tests cannot run: slurm-up's reason, or that the fixture did not run.
std::string skip_reason() {
  if (fs::exists(slurm_dir() + "/skip")) return read_file(slurm_dir() + "/skip");
  if (!fs::exists(slurm_dir() + "/slurm.conf")) return "no Slurm started (run through ctest: the fixture starts it)";
  return "";
}

#define REQUIRE_SLURM()                                    \
  do {                                                     \
    const std::string why = skip_reason();                 \
    if (!why.empty()) GTEST_SKIP() << "no Slurm: " << why; \
  } while (0)

// The steps' limits are sized for qprof's own few MiB: under AddressSanitizer qprof holds about
// 100 MiB of shadow memory, charged to the step's cgroup beside the job (the release build runs
// these tests in scripts/test).
#define REQUIRE_RELEASE_SIZES()                                                                                    \
  do {                                                                                                             \
    if (sanitized()) GTEST_SKIP() << "qprof's sanitizer memory is charged to the step: sized for a release build"; \
  } while (0)

// A Slurm client command (srun, sbatch) against the tests' own Slurm.
Result slurm(std::vector<std::string> argv, int timeout_s = 60) {
  argv.insert(argv.begin(), {"env", "SLURM_CONF=" + slurm_dir() + "/slurm.conf"});
  return run(argv, "", timeout_s);
}

// A shell line that runs `qprof_args` and writes qprof's exit status to `status_file`: srun's
// own status says the step's OOM events, not qprof's.
std::string qprof_line(const std::string& qprof_args, const std::string& status_file) {
  return qprof_bin() + " " + qprof_args + "; echo $? > " + status_file;
}

TEST(Slurm, TheStepsLimitIsFoundAndTheFootprintIsItsCharge) {
  REQUIRE_SLURM();
  REQUIRE_RELEASE_SIZES();
  const std::string dir = temp_dir();
  const std::string out = dir + "/step.dat";
  // 100 MiB in the parent, 3 workers of 60 MiB: 280 MiB of the tree's own, under --mem=600M.
  // After qprof, the step's own high-water mark (its cgroup: the task's parent) is kept.
  const std::string charge = dir + "/step_peak";
  const Result r =
      slurm({"srun", "--mem=600M", "sh", "-c",
             qprof_line("run -v -o " + out + " -- " + workload("alloc_tree") + " 100 3 60 1500", dir + "/status") +
                 "; d=/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup); "
                 "cat $d/../memory.max_usage_in_bytes > " +
                 charge +
                 " 2>/dev/null || cat /sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)"
                 "/memory.peak > " +
                 charge});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(dir + "/status"), "0\n");
  const trace::Trace t = trace::read_trace(out);
  const auto limit = analysis::memory_limit(t);
  ASSERT_TRUE(limit) << "no limit in the header";
  EXPECT_EQ(limit->bytes, 600 * kMiB) << limit->source;
  EXPECT_NE(unwrapped(r.err).find("limit of 600.0 MiB"), std::string::npos) << r.err;
  // The footprint: the tree's own charge, within what the step's cgroup charged (qprof and sh
  // are charged there too, a few MiB each).
  const auto fp = trace::footprint_of(t);
  ASSERT_TRUE(fp);
  const Bytes step_peak = std::stoull(read_file(charge));
  EXPECT_GE(mib(fp->peak), 280.0) << mib(fp->peak);
  EXPECT_LE(fp->peak, step_peak) << mib(fp->peak) << " MiB against the step's " << mib(step_peak);
  EXPECT_LE(mib(step_peak - fp->peak), 64.0) << mib(fp->peak) << " MiB against the step's " << mib(step_peak);
  // The request to paste follows from it: 15 % above the footprint, in Slurm's form.
  EXPECT_NE(r.err.find("request         --mem="), std::string::npos) << r.err;
}

TEST(Slurm, MaxPeakAsAShareOfMem) {
  REQUIRE_SLURM();
  const std::string dir = temp_dir();
  // 300 MiB under --mem=500M: within 90 % (450 MiB), over 50 % (250 MiB).
  const std::string job = workload("alloc_tree") + " 300 0 0 300";
  Result r = slurm({"srun", "--mem=500M", "sh", "-c",
                    qprof_line("run -q --max-peak 90% -o " + dir + "/a.dat -- " + job, dir + "/a")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(dir + "/a"), "0\n");
  r = slurm({"srun", "--mem=500M", "sh", "-c",
             qprof_line("run -q --max-peak 50% -o " + dir + "/b.dat -- " + job, dir + "/b")});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(read_file(dir + "/b"), "3\n") << r.err;
  EXPECT_NE(r.err.find("memory budget exceeded"), std::string::npos) << r.err;
}

TEST(Slurm, ARankPerTask) {
  REQUIRE_SLURM();
  const std::string dir = temp_dir();
  const Result r = slurm({"srun", "-n", "2", "--mem=400M", qprof_bin(), "run", "-q", "-o", dir + "/rank%r.dat", "--",
                          workload("alloc_tree"), "40", "0", "0", "300"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (int rank = 0; rank < 2; ++rank) {
    const trace::Trace t = trace::read_trace(dir + "/rank" + std::to_string(rank) + ".dat");
    EXPECT_EQ(t.meta.job.rank, rank);
    EXPECT_EQ(t.meta.job.world_size, 2);
    EXPECT_FALSE(t.meta.job.job_id.empty());
    const auto limit = analysis::memory_limit(t);
    ASSERT_TRUE(limit);
    EXPECT_EQ(limit->bytes, 400 * kMiB);
  }
}

TEST(Slurm, SbatchFindsTheJobsLimit) {
  REQUIRE_SLURM();
  const std::string dir = temp_dir();
  const std::string out = dir + "/batch.dat";
  const Result r = slurm({"sbatch", "--wait", "--mem=700M", "--output=" + dir + "/slurm.out",
                          "--wrap=" + qprof_bin() + " run -o " + out + " -- " + workload("alloc_tree") + " 50 0 0 300"},
                         90);
  ASSERT_EQ(r.status, 0) << r.err << read_file(dir + "/slurm.out");
  const trace::Trace t = trace::read_trace(out);
  ASSERT_TRUE(t.exit);
  EXPECT_EQ(t.exit->status, 0);
  const auto limit = analysis::memory_limit(t);
  ASSERT_TRUE(limit);
  EXPECT_EQ(limit->bytes, 700 * kMiB);
}

// Workers of 150 MiB each, three of them, under --mem=300M: the OOM killer kills a worker;
// their parent waits (or, with "ignore", lets the kernel reap them unseen) and exits 0.
void expect_worker_killed(const std::string& mode) {
  const std::string dir = temp_dir();
  const std::string out = dir + "/oom.dat";
  const Result r =
      slurm({"srun", "--mem=300M", "sh", "-c",
             qprof_line("run -o " + out + " -- " + workload("oom_workers") + " 3 150 1500 " + mode, dir + "/status")});
  EXPECT_EQ(read_file(dir + "/status"), "0\n") << "qprof's status is the command's\n" << r.err;
  const trace::Trace t = trace::read_trace(out);
  ASSERT_FALSE(t.oom_kills.empty()) << r.err;
  const trace::OomKill& k = t.oom_kills.front();
  EXPECT_GT(k.pid, 0);
  EXPECT_NE(k.pid, t.meta.root_pid);
  EXPECT_EQ(k.role, "worker");
  EXPECT_EQ(k.name, "oom_workers");
  ASSERT_TRUE(k.limit);
  EXPECT_EQ(*k.limit, 300 * kMiB);
  ASSERT_TRUE(k.held);
  // A worker had touched part of its 150 MiB when it was killed.
  EXPECT_GT(mib(*k.held), 20.0);
  EXPECT_LE(mib(*k.held), 160.0);
  EXPECT_GE(k.t, t.t0());
  // The summary says it first, right after the command line.
  const std::string said = unwrapped(r.err);
  const std::size_t oom = said.find("qprof:   OOM kill");
  ASSERT_NE(oom, std::string::npos) << r.err;
  EXPECT_LT(oom, said.find("qprof:   footprint")) << r.err;
  EXPECT_NE(said.find("process " + std::to_string(k.pid) + " (oom_workers, a worker)"), std::string::npos) << r.err;
  // report, peak and report --request say it too; the next request grows as VPA's does.
  const Result rep = qprof({"report", out});
  EXPECT_NE(rep.out.find("OOM kill"), std::string::npos) << rep.out;
  const Result peak = qprof({"peak", out});
  EXPECT_NE(peak.err.find("OOM kill"), std::string::npos) << peak.err;
  const Result req = qprof({"report", "--request", out});
  EXPECT_NE(req.out.find("slurm       --mem=400M"), std::string::npos) << req.out;  // max(300 + 100, 300 × 1.2)
}

TEST(Slurm, AnOomKilledWorkerIsNamedWithItsLimit) {
  REQUIRE_SLURM();
  REQUIRE_RELEASE_SIZES();
  expect_worker_killed("wait");
}

TEST(Slurm, AWorkerWhoseParentIgnoresItsDeathIsNamedToo) {
  REQUIRE_SLURM();
  REQUIRE_RELEASE_SIZES();
  expect_worker_killed("ignore");
}

}  // namespace
}  // namespace qprof::test
