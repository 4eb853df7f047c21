// SPDX-License-Identifier: Apache-2.0
// Every view of a job (peak --sum, peak --by-host, report --sum, compare's job row) gives one
// figure, never below a rank's own peak: a spike one rank's samples missed and its cgroup's
// high-water mark kept is in the job's figure. A rank given twice is refused, an OOM kill of a
// rank is said by every view. Run with a cgroup (root), as root with --cgroup off, and as nobody.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "e2e_util.hpp"

namespace qprof::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

enum class Path { cgroup, pss_root, pss_nobody };

std::string name_of(Path p) {
  return p == Path::cgroup ? "Cgroup" : p == Path::pss_root ? "RootWithoutCgroup" : "AsNobody";
}

struct Files {
  std::string dir, qprof, alloc_tree, spike;
};

// Copies the user nobody may run, in a directory it may write.
const Files& files() {
  static const Files f = [] {
    Files out{"", copy_for_other_users(qprof_bin()), copy_for_other_users(workload("alloc_tree")),
              copy_for_other_users(workload("spike"))};
    out.dir = fs::path(out.qprof).parent_path().string();
    return out;
  }();
  return f;
}

// One rank of a Slurm step (its variables set by hand), recorded on `path`'s terms.
Process start_rank(Path path, const std::string& out, int rank, const std::vector<std::string>& job) {
  std::vector<std::string> argv;
  if (path == Path::pss_nobody) argv = {"runuser", "-u", "nobody", "--"};
  argv.insert(argv.end(), {"env", "SLURM_PROCID=" + std::to_string(rank), "SLURM_LOCALID=" + std::to_string(rank),
                           "SLURM_NTASKS=2", "SLURM_JOB_ID=77", "QPROF_HOSTNAME=nodeA",
                           path == Path::pss_nobody ? files().qprof : qprof_bin(), "run", "-q", "-i", "0.7"});
  if (path == Path::pss_root) argv.insert(argv.end(), {"--cgroup", "off"});
  argv.insert(argv.end(), {"-o", out, "--"});
  argv.insert(argv.end(), job.begin(), job.end());
  return Process(argv);
}

double first_number(const std::string& line) {
  const auto tab = line.find('\t');
  return std::strtod(line.c_str() + (tab == std::string::npos ? 0 : tab + 1), nullptr);
}

double own_peak(const std::string& trace) {
  const Result r = qprof({"peak", "--metric", "footprint", trace});
  EXPECT_EQ(r.status, 0) << r.err;
  return first_number(r.out);
}

class JobViews : public ::testing::TestWithParam<Path> {
 protected:
  void SetUp() override {
    const Path p = GetParam();
    if (p == Path::cgroup && (geteuid() != 0 || !fs::exists("/sys/fs/cgroup/memory/cgroup.procs")))
      GTEST_SKIP() << "needs root and a cgroup v1 memory hierarchy to create each rank's group";
    if (p == Path::pss_nobody && geteuid() != 0) GTEST_SKIP() << "switching to the user nobody needs root";
  }
};

// Rank 0 holds 40 MiB for 2.5 s; rank 1 spikes to 150 MiB for 40 ms at 1 s, between two of its
// samples (every 0.7 s). With a cgroup the kernel's high-water mark keeps the spike: the job held at
// least it plus rank 0's memory. Without one, the ranks' sampled Σ PSS is summed. Either way
// every view says one figure, and it is not below either rank's own peak.
TEST_P(JobViews, OneFigureNeverBelowARanksOwnPeak) {
  const std::string dir = files().dir + "/job_views_" + name_of(GetParam());
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::all);
  const std::string out = dir + "/job.%h.%r.dat";
  Process r0 = start_rank(GetParam(), out, 0, {files().alloc_tree, "40", "0", "0", "2500"});
  Process r1 = start_rank(GetParam(), out, 1, {files().spike, "150", "40", "1000"});
  const Result a = r0.wait(60), b = r1.wait(60);
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
  const std::string t0 = dir + "/job.nodeA.0.dat", t1 = dir + "/job.nodeA.1.dat";
  const double own0 = own_peak(t0), own1 = own_peak(t1);
  EXPECT_GE(own0, 40.0);

  const Result sum = qprof({"peak", "--sum", t0, t1});
  ASSERT_EQ(sum.status, 0) << sum.err;
  const double job = first_number(sum.out);
  EXPECT_GE(job, std::max(own0, own1) - 0.001) << sum.out;

  const Result by_host = qprof({"peak", "--by-host", t0, t1});
  ASSERT_EQ(by_host.status, 0) << by_host.err;
  EXPECT_EQ(by_host.out.rfind("nodeA (2 traces)\t", 0), 0u) << by_host.out;
  EXPECT_NEAR(first_number(by_host.out), job, 0.001);

  const Result report = qprof({"report", "--sum", "--format", "json", t0, t1});
  ASSERT_EQ(report.status, 0) << report.err;
  const json r = json::parse(report.out);
  EXPECT_NEAR(mib(r["job_peak_bytes"].get<Bytes>()), job, 0.001);

  const Result compare = qprof({"compare", "--format", "json", t0, t1});
  ASSERT_EQ(compare.status, 0) << compare.err;
  const json c = json::parse(compare.out);
  ASSERT_EQ(c["comparison"].size(), 3u) << "each rank and the job";
  EXPECT_NEAR(mib(c["comparison"][2]["peak_footprint_bytes"]["value"].get<Bytes>()), job, 0.01);

  if (GetParam() == Path::cgroup) {
    // The spike is in rank 1's own figure (its cgroup's mark) and, with rank 0's 40 MiB, in the job's.
    EXPECT_GE(own1, 150.0);
    EXPECT_GE(job, own1 + 30.0) << "rank 0 held 40 MiB while rank 1 spiked";
    EXPECT_TRUE(r.contains("job_peak_floor")) << report.out;
    EXPECT_FALSE(r.contains("job_peak_at_s")) << "a mark kept between samples has no moment";
  }
}

INSTANTIATE_TEST_SUITE_P(, JobViews, ::testing::Values(Path::cgroup, Path::pss_root, Path::pss_nobody),
                         [](const ::testing::TestParamInfo<Path>& i) { return name_of(i.param); });

// Two traces of one rank (the same file twice, or a copy) would count it twice: every view refuses,
// and compare leaves its job row out, saying why. Traces of two jobs are summed with a warning.
TEST(JobRanks, ARankGivenTwiceIsRefusedAndTwoJobsAreSaid) {
  const std::string dir = fresh_dir("job_twice");
  Process r0 = start_rank(Path::pss_root, dir + "/a.%r.dat", 0, {workload("alloc_tree"), "20", "0", "0", "200"});
  ASSERT_EQ(r0.wait(60).status, 0);
  const std::string a = dir + "/a.0.dat", copy = dir + "/copy.dat";
  fs::copy_file(a, copy);
  for (const std::vector<std::string>& args : {std::vector<std::string>{"peak", "--sum", a, a},
                                               {"peak", "--by-host", a, copy},
                                               {"report", "--sum", a, copy},
                                               {"plot", "--sum", a, copy, "-o", dir + "/sum.svg"}}) {
    const Result r = qprof(args);
    EXPECT_EQ(r.status, 2) << args[0] << " " << args[1];
    EXPECT_NE(joined(r.err).find("rank 0 (nodeA) is given twice"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir + "/sum.svg"));
  const Result compare = qprof({"compare", a, copy});
  EXPECT_EQ(compare.status, 0) << compare.err;
  EXPECT_NE(joined(compare.err).find("no job row: rank 0 (nodeA) is given twice"), std::string::npos) << compare.err;
  EXPECT_EQ(compare.out.find("job ("), std::string::npos) << compare.out;

  // Another job's rank 1 beside it: summed, with a warning, and the world size not called short.
  write_file(dir + "/other.dat", [&] {
    std::string text = read_file(a);
    const auto job = text.find("job=77");
    text.replace(job, 6, "job=78");
    const auto rank = text.find(" rank=0");
    text.replace(rank, 7, " rank=1");
    return text;
  }());
  const Result two = qprof({"report", "--sum", "--format", "json", a, dir + "/other.dat"});
  ASSERT_EQ(two.status, 0) << two.err;
  const json j = json::parse(two.out);
  ASSERT_TRUE(j.contains("several_jobs")) << two.out;
  EXPECT_NE(j["several_jobs"].get<std::string>().find("traces of 2 jobs (ids 77, 78)"), std::string::npos);
  EXPECT_FALSE(j.contains("missing_ranks")) << "two traces of a world of two";
  const Result peak = qprof({"peak", "--sum", a, dir + "/other.dat"});
  EXPECT_NE(joined(peak.err).find("traces of 2 jobs"), std::string::npos) << peak.err;
}

}  // namespace
}  // namespace qprof::test
