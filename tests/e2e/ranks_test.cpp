// SPDX-License-Identifier: Apache-2.0
// Many ranks: qprof inside each rank's launch line (Slurm's variables set by hand, the real
// mpirun and torchrun), traces named by -o placeholders, and the job read back as one.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "e2e_util.hpp"
#include "qprof/trace/completeness.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using trace::Trace;

namespace {

namespace fs = std::filesystem;

// `qprof run` as one rank of a Slurm step: the variables srun sets, by hand.
std::vector<std::string> slurm_rank(const std::string& host, int rank, int ntasks, const std::string& output,
                                    const std::vector<std::string>& command) {
  std::vector<std::string> argv{"env",
                                "SLURM_PROCID=" + std::to_string(rank),
                                "SLURM_LOCALID=" + std::to_string(rank),
                                "SLURM_NTASKS=" + std::to_string(ntasks),
                                "SLURM_JOB_ID=4242",
                                "QPROF_HOSTNAME=" + host,
                                qprof_bin(),
                                "run",
                                "-q",
                                "-o",
                                output,
                                "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

Bytes peak_of(const std::string& file) { return max_mem(trace::read_trace(file)); }

double first_number(const std::string& line) {
  const auto tab = line.find('\t');
  return std::strtod(line.c_str() + (tab == std::string::npos ? 0 : tab + 1), nullptr);
}

// Two ranks that hold 50 and 100 MiB at the same time for 1.5 s.
void run_two_ranks(const std::string& dir, const std::string& host0, const std::string& host1) {
  Process r0(slurm_rank(host0, 0, 2, dir + "/job.%h.%r.dat", {workload("alloc_tree"), "50", "0", "0", "1500"}));
  Process r1(slurm_rank(host1, 1, 2, dir + "/job.%h.%r.dat", {workload("alloc_tree"), "100", "0", "0", "1500"}));
  const Result a = r0.wait(60), b = r1.wait(60);
  ASSERT_EQ(a.status, 0) << a.err;
  ASSERT_EQ(b.status, 0) << b.err;
}

TEST(Ranks, SlurmVariablesNameTheTracesAndFillTheHeader) {
  const std::string dir = fresh_dir("slurm");
  run_two_ranks(dir, "nodeA", "nodeA");
  ASSERT_TRUE(fs::exists(dir + "/job.nodeA.0.dat"));
  ASSERT_TRUE(fs::exists(dir + "/job.nodeA.1.dat"));
  const Trace t1 = trace::read_trace(dir + "/job.nodeA.1.dat");
  EXPECT_EQ(t1.meta.host, "nodeA");
  EXPECT_EQ(t1.meta.job.rank, 1);
  EXPECT_EQ(t1.meta.job.local_rank, 1);
  EXPECT_EQ(t1.meta.job.world_size, 2);
  EXPECT_EQ(t1.meta.job.job_id, "4242");
  EXPECT_EQ(t1.meta.job.launcher, "slurm");

  // Each rank's own peak: the second holds 50 MiB more (same program, same baseline).
  const double p0 = mib(peak_of(dir + "/job.nodeA.0.dat")), p1 = mib(peak_of(dir + "/job.nodeA.1.dat"));
  EXPECT_GE(p0, 50.0);
  EXPECT_NEAR(p1 - p0, 50.0, 2.0);
  // Both held their memory together for 1.5 s: the job's peak is the sum of the ranks' peaks.
  const Result sum = qprof({"peak", "--sum", "--metric", "rss", dir + "/job.nodeA.0.dat", dir + "/job.nodeA.1.dat"});
  ASSERT_EQ(sum.status, 0) << sum.err;
  EXPECT_EQ(sum.out.rfind("job (2 traces)\t", 0), 0u) << sum.out;
  EXPECT_NEAR(first_number(sum.out), p0 + p1, 1.0);
  EXPECT_LE(first_number(sum.out), p0 + p1 + 0.001);

  // A budget on the job: under the sum fails (3), above passes.
  EXPECT_EQ(
      qprof({"peak", "--sum", "--metric", "rss", "--max-peak", std::to_string(static_cast<int>(p0 + p1 - 20)) + "MiB",
             dir + "/job.nodeA.0.dat", dir + "/job.nodeA.1.dat"})
          .status,
      3);
  EXPECT_EQ(
      qprof({"peak", "--sum", "--metric", "rss", "--max-peak", std::to_string(static_cast<int>(p0 + p1 + 20)) + "MiB",
             dir + "/job.nodeA.0.dat", dir + "/job.nodeA.1.dat"})
          .status,
      0);
}

TEST(Ranks, ByHostGivesEachHostsPeakAndTheReportSumsTheJob) {
  const std::string dir = fresh_dir("hosts");
  run_two_ranks(dir, "nodeA", "nodeB");
  const std::string a = dir + "/job.nodeA.0.dat", b = dir + "/job.nodeB.1.dat";
  const double p0 = mib(peak_of(a)), p1 = mib(peak_of(b));
  const Result by_host = qprof({"peak", "--by-host", "--metric", "rss", a, b});
  ASSERT_EQ(by_host.status, 0) << by_host.err;
  const auto nl = by_host.out.find('\n');
  ASSERT_NE(nl, std::string::npos);
  const std::string first = by_host.out.substr(0, nl), second = by_host.out.substr(nl + 1);
  EXPECT_EQ(first.rfind("nodeA (1 trace)\t", 0), 0u) << by_host.out;
  EXPECT_EQ(second.rfind("nodeB (1 trace)\t", 0), 0u) << by_host.out;
  EXPECT_NEAR(first_number(first), p0, 0.001);
  EXPECT_NEAR(first_number(second), p1, 0.001);

  const Result json = qprof({"report", "--sum", "--metric", "rss", "--format", "json", a, b});
  ASSERT_EQ(json.status, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["host_count"], 2);
  EXPECT_EQ(doc["job_id"], "4242");
  ASSERT_EQ(doc["ranks"].size(), 2u);
  EXPECT_EQ(doc["ranks"][1]["highest"], true);
  EXPECT_NEAR(static_cast<double>(doc["job_peak_bytes"]) / (1 << 20), p0 + p1, 1.0);
  ASSERT_EQ(doc["stages"].size(), 1u);
  EXPECT_EQ(doc["stages"][0]["stage"], "Hold");
  EXPECT_EQ(doc["stages"][0]["ranks"], 2);
}

TEST(Ranks, CompareGivesARowPerRankAndTheJobsTotal) {
  const std::string dir = fresh_dir("compare");
  run_two_ranks(dir, "nodeA", "nodeA");
  const std::string a = dir + "/job.nodeA.0.dat", b = dir + "/job.nodeA.1.dat";
  const double p0 = mib(peak_of(a)), p1 = mib(peak_of(b));
  const Result r = qprof({"compare", "--format", "json", a, b});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  const auto& rows = doc["comparison"];
  ASSERT_EQ(rows.size(), 3u) << r.out;
  EXPECT_EQ(rows[0]["label"], "rank 0 (nodeA)");
  EXPECT_EQ(rows[1]["label"], "rank 1 (nodeA)");
  EXPECT_EQ(rows[2]["label"], "job (2 ranks)");
  const double job = static_cast<double>(rows[2]["peak_rss_bytes"]["value"]) / (1 << 20);
  EXPECT_NEAR(job, p0 + p1, 1.0) << r.out;
  // The job's footprint is its ranks' footprints summed, as peak --sum sums them: their cgroup
  // charges where each ran in one (root), else their PSS; never one basis for one and another
  // for the other.
  const Result sum = qprof({"peak", "--sum", "--unit", "B", a, b});
  ASSERT_EQ(sum.status, 0) << sum.err;
  EXPECT_EQ(static_cast<double>(rows[2]["peak_footprint_bytes"]["value"]), first_number(sum.out)) << r.out << sum.out;
  const Result text = qprof({"compare", a, b});
  EXPECT_NE(text.out.find("highest peak of a rank: rank 1 (nodeA)"), std::string::npos) << text.out;
}

TEST(Ranks, PlotSumDrawsTheJobWithEachRankDashedUnderneath) {
  const std::string dir = fresh_dir("plot_sum");
  run_two_ranks(dir, "nodeA", "nodeA");
  const std::string a = dir + "/job.nodeA.0.dat", b = dir + "/job.nodeA.1.dat";
  const double sum = mib(peak_of(a)) + mib(peak_of(b));
  const std::string script = dir + "/job.gp";
  const Result r = qprof({"plot", "--sum", "--metric", "rss", a, b, "-o", dir + "/job.svg", "--script", script});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(joined(r.err), "") << "both ranks ended on one host: nothing to warn of";
  EXPECT_GT(fs::file_size(dir + "/job.svg"), 1000u);
  const std::string gp = read_file(script);
  // The job's line with its peak (the ranks summed), then each rank, dashed.
  const auto job = gp.find("job (2 ranks, summed), peak ");
  ASSERT_NE(job, std::string::npos) << gp.substr(0, 4000);
  const double drawn = std::strtod(gp.c_str() + job + std::string("job (2 ranks, summed), peak ").size(), nullptr);
  EXPECT_NEAR(drawn, sum, 1.0);
  for (const char* rank : {"rank 0 (nodeA), peak", "rank 1 (nodeA), peak"}) {
    const auto at = gp.find(rank);
    ASSERT_NE(at, std::string::npos) << rank;
    const std::string line = gp.substr(gp.rfind('\n', at) + 1, gp.find('\n', at) - gp.rfind('\n', at) - 1);
    EXPECT_NE(line.find("dt 2"), std::string::npos) << line;
  }
  // Ranks that ran in cgroups of their own (root) have their charges summed: the sum can be
  // drawn as any rank's charge can.
  if (!trace::read_trace(a).cgroup.empty() && !trace::read_trace(b).cgroup.empty()) {
    const Result charge = qprof({"plot", "--sum", "--metric", "cgroup", a, b, "-o", dir + "/charge.svg"});
    EXPECT_EQ(charge.status, 0) << charge.err;
  }
  // A metric the sum does not hold is said of the job, not of its temporary file.
  const Result swap = qprof({"plot", "--sum", "--metric", "swap", a, b, "-o", dir + "/swap.svg"});
  EXPECT_EQ(swap.status, 2);
  EXPECT_NE(joined(swap.err).find("job (2 ranks, summed): no swap series (it has: "), std::string::npos) << swap.err;
  // The temporary trace of the sum is gone.
  EXPECT_EQ(qprof({"plot", "--sum", a, "-o", dir + "/one.svg"}).status, 2);
}

// Ranks that started 200 s apart: the job's summed trace starts with the first rank, and its
// first sample with it, on the wall clock and from each start alike; no reader of the job says
// its first sample came late or its clock went back.
TEST(Ranks, RanksStartedApartMakeAJobThatStartsWithItsFirstSample) {
  const std::string dir = fresh_dir("ranks_apart");
  const auto rank = [&](int r, double start) {
    std::string text = "QPROF 1 version=0.1.0 interval=0.100000 host=nodeA root_pid=" + std::to_string(100 + r) +
                       " start=" + std::to_string(start) + " metric=rss rank=" + std::to_string(r) +
                       " world_size=2 job=4242\nCMDLINE ./train\n";
    for (int i = 0; i < 5; ++i)
      text += "MEM " + std::to_string(10 * (r + 1)) + " " + std::to_string(start + 0.1 * i) + "\n";
    text += "EXIT " + std::to_string(start + 0.5) + " status=0 signal=0 timed_out=0\n";
    const std::string path = dir + "/job.nodeA." + std::to_string(r) + ".dat";
    write_file(path, text);
    return path;
  };
  const std::string a = rank(0, 1700000000.0), b = rank(1, 1700000200.0);
  const std::vector<std::vector<std::string>> commands = {
      {"plot", "--sum", a, b, "-o", dir + "/wall.svg"},
      {"plot", "--sum", "--align", "start", a, b, "-o", dir + "/start.svg"},
      {"compare", a, b},
      {"peak", "--sum", a, b},
      {"report", "--sum", a, b}};
  for (const auto& c : commands) {
    const Result r = qprof(c);
    EXPECT_EQ(r.status, 0) << c[0] << ": " << r.err;
    EXPECT_EQ(r.err.find("first sample"), std::string::npos) << c[0] << ": " << r.err;
    EXPECT_EQ(r.err.find("clock went back"), std::string::npos) << c[0] << ": " << r.err;
  }
}

// A rank without its end record is said once, by its own name: never again as the sum's
// temporary file (/proc/self/fd/N), which is as complete as the ranks are.
TEST(Ranks, PlotSumSaysARankWithoutItsEndOnceByItsName) {
  const std::string dir = fresh_dir("plot_sum_cut");
  run_two_ranks(dir, "nodeA", "nodeA");
  const std::string a = dir + "/job.nodeA.0.dat", b = dir + "/job.nodeA.1.dat";
  std::string text = read_file(b);
  const auto exit_line = text.rfind("\nEXIT ");
  ASSERT_NE(exit_line, std::string::npos) << text.substr(text.size() - 200);
  text.resize(exit_line + 1);  // as a rank killed before its last line
  write_file(b, text);
  const Result r = qprof({"plot", "--sum", a, b, "-o", dir + "/job.svg"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(joined(r.err), "qprof: warning: " + b +
                               ": incomplete trace: no end record (EXIT): qprof was killed, or the run " +
                               "still goes on\n");
}

// report --sum of a job with a rank cut short: the report itself says which rank and why, in
// every format (the warning on stderr is not in a saved report), and the rank's row carries it.
TEST(Ranks, ReportSumSaysWhichRankIsIncomplete) {
  const std::string dir = fresh_dir("report_sum_cut");
  run_two_ranks(dir, "nodeA", "nodeA");
  const std::string a = dir + "/job.nodeA.0.dat", b = dir + "/job.nodeA.1.dat";
  const Result whole = qprof({"report", "--sum", "--format", "json", a, b});
  ASSERT_EQ(whole.status, 0) << whole.err;
  EXPECT_FALSE(nlohmann::json::parse(whole.out).contains("incomplete")) << whole.out;
  std::string text = read_file(b);
  const auto exit_line = text.rfind("\nEXIT ");
  ASSERT_NE(exit_line, std::string::npos) << text.substr(text.size() - 200);
  text.resize(exit_line + 1);  // as a rank killed before its last line
  write_file(b, text);
  const Result json = qprof({"report", "--sum", "--format", "json", a, b});
  ASSERT_EQ(json.status, 0) << json.err;
  const auto doc = nlohmann::json::parse(json.out);
  EXPECT_EQ(doc["incomplete"],
            "1 trace incomplete, the sum counts what it holds: rank 1 (nodeA) (" + b + "): " + trace::kNoEndRecord)
      << json.out;
  EXPECT_EQ(doc["ranks"][0]["incomplete"], "");
  EXPECT_EQ(doc["ranks"][1]["incomplete"], trace::kNoEndRecord);
  const Result plain = qprof({"report", "--sum", a, b});
  ASSERT_EQ(plain.status, 0) << plain.err;
  EXPECT_NE(plain.out.find("trace incomplete"), std::string::npos) << plain.out;
  EXPECT_NE(plain.out.find("rank 1 (nodeA)"), std::string::npos) << plain.out;
}

// --align lays a job's ranks on one axis: without --sum (or --by-host) it would do nothing, and is
// refused rather than ignored.
TEST(Ranks, AlignWithoutASumIsRefused) {
  const std::string quark = data_file("report/quark.dat");
  for (const std::vector<std::string>& args : {std::vector<std::string>{"report", "--align", "start", quark},
                                               {"peak", "--align", "start", quark},
                                               {"plot", "--align", "start", quark, "-o", temp_dir() + "/align.svg"}}) {
    const Result r = qprof(args);
    EXPECT_EQ(r.status, 2) << args[0];
    EXPECT_NE(joined(r.err).find("--align"), std::string::npos) << args[0] << ": " << r.err;
    EXPECT_NE(joined(r.err).find("--sum"), std::string::npos) << args[0] << ": " << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(temp_dir() + "/align.svg"));
}

// In Perfetto each rank's trace is a process named as in the plot and listed in rank order,
// whatever the order of the files; a trace without a rank keeps its file's name, after them.
TEST(Ranks, ExportNamesAndOrdersTheRanks) {
  const std::string dir = fresh_dir("export");
  for (int rank : {1, 0}) {
    const Result r = run(slurm_rank("nodeB", rank, 2, dir + "/job.%r.dat", {"true"}));
    ASSERT_EQ(r.status, 0) << r.err;
  }
  const Result r = qprof({"export", dir + "/job.1.dat", dir + "/job.0.dat", data_file("mprof/func.dat")});
  ASSERT_EQ(r.status, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  std::map<int, std::string> names;
  std::map<int, long> order;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "M") continue;
    if (e["name"] == "process_name") names[e["pid"]] = e["args"]["name"];
    if (e["name"] == "process_sort_index") order[e["pid"]] = e["args"]["sort_index"];
  }
  EXPECT_EQ(names, (std::map<int, std::string>{{1, "rank 1 (nodeB)"}, {2, "rank 0 (nodeB)"}, {3, "func"}}));
  EXPECT_EQ(order[1], 1);
  EXPECT_EQ(order[2], 0);
  EXPECT_GT(order[3], order[1]);
  EXPECT_EQ(doc["metadata"]["traces"][0]["rank"], 1);
  EXPECT_FALSE(doc["metadata"]["traces"][2].contains("rank"));
  // CSV's trace column and JSON's labels name each trace as the Chrome trace does.
  const Result csv =
      qprof({"export", "--format", "csv", dir + "/job.1.dat", dir + "/job.0.dat", data_file("mprof/func.dat")});
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_NE(csv.out.find("\nrank 1 (nodeB),"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("\nrank 0 (nodeB),"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("\nfunc,"), std::string::npos) << csv.out;
  EXPECT_EQ(csv.out.find("job.1"), std::string::npos) << csv.out;
  const auto json = nlohmann::json::parse(
      qprof({"export", "--format", "json", dir + "/job.1.dat", dir + "/job.0.dat", data_file("mprof/func.dat")}).out);
  EXPECT_EQ(json["traces"][0]["label"], "rank 1 (nodeB)");
  EXPECT_EQ(json["traces"][2]["label"], "func");
}

TEST(Ranks, TheDefaultNameCarriesHostAndRankAndAMissingRankIsAnError) {
  const std::string dir = fresh_dir("default_name");
  const Result r =
      run({"sh", "-c",
           "cd '" + dir + "' && exec env RANK=3 WORLD_SIZE=4 QPROF_HOSTNAME=n1 '" + qprof_bin() + "' run -q -- true"});
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(names[0].rfind("qprof_n1.r3_", 0), 0u) << names[0];

  const Result missing = qprof({"run", "-q", "-o", dir + "/x.%r.dat", "--", "true"});
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(joined(missing.err).find("%r (the rank) but no launcher set it"), std::string::npos) << missing.err;
  EXPECT_FALSE(fs::exists(dir + "/x.%r.dat"));
}

TEST(Ranks, FourMpiRanksUnderTheRealMpirun) {
  const std::string mpi = workload("mpi_ranks");
  if (!fs::exists(mpi) || !fs::exists("/usr/bin/mpirun"))
    GTEST_SKIP() << "OpenMPI not installed (scripts/install-deps)";
  const std::string dir = fresh_dir("mpi");
  const Result r = run({"mpirun", "--allow-run-as-root", "--oversubscribe", "-np", "4", qprof_bin(), "run", "-q", "-o",
                        dir + "/mpi.%h.%r.dat", "--", mpi, "50", "1500"},
                       "", 120);
  ASSERT_EQ(r.status, 0) << r.err;
  std::vector<std::string> files;
  double sum_of_peaks = 0, p0 = 0;
  for (int rank = 0; rank < 4; ++rank) {
    std::string found;
    for (const auto& e : fs::directory_iterator(dir)) {
      const std::string n = e.path().filename().string();
      if (n.ends_with("." + std::to_string(rank) + ".dat")) found = e.path().string();
    }
    ASSERT_FALSE(found.empty()) << "no trace for rank " << rank;
    const Trace t = trace::read_trace(found);
    EXPECT_EQ(t.meta.job.rank, rank);
    EXPECT_EQ(t.meta.job.world_size, 4);
    EXPECT_EQ(t.meta.job.launcher, "openmpi");
    const double p = mib(max_mem(t));
    if (rank == 0) p0 = p;
    // Rank r holds (r + 1) × 50 MiB over the same MPI baseline as rank 0 (± what MPI's own
    // buffers differ by between ranks).
    EXPECT_NEAR(p - p0, 50.0 * rank, 8.0) << "rank " << rank;
    sum_of_peaks += p;
    files.push_back(found);
  }
  std::vector<std::string> args{"peak", "--sum", "--metric", "rss"};
  args.insert(args.end(), files.begin(), files.end());
  const Result sum = qprof(args);
  ASSERT_EQ(sum.status, 0) << sum.err;
  // Every rank held its memory between the same two barriers for 1.5 s.
  EXPECT_GE(first_number(sum.out), 0.97 * sum_of_peaks);
  EXPECT_LE(first_number(sum.out), sum_of_peaks + 0.001);
}

TEST(Ranks, TwoTorchrunRanksOfADistributedDataParallelJob) {
  if (!fs::exists("/usr/bin/torchrun"))
    GTEST_SKIP() << "torchrun not installed (Debian python3-torch, scripts/install-deps)";
  const std::string dir = fresh_dir("torchrun");
  // Debian 12's torch 1.13 on Python 3.11: torchrun's default --redirects 0 --tee 0 fails.
  const Result r = run({"torchrun", "--standalone", "--nproc_per_node=2", "--redirects", "1", "--tee", "2", "--log_dir",
                        dir + "/logs", "--no_python", qprof_bin(), "run", "-q", "-o", dir + "/ddp.%h.%r.dat", "--",
                        debian_python(), data_file("../workloads/ddp_ranks.py"), "50"},
                       "", 170);
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  std::vector<std::string> files(2);
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string n = e.path().filename().string();
    if (n.starts_with("ddp.") && n.ends_with(".0.dat")) files[0] = e.path().string();
    if (n.starts_with("ddp.") && n.ends_with(".1.dat")) files[1] = e.path().string();
  }
  ASSERT_FALSE(files[0].empty());
  ASSERT_FALSE(files[1].empty());
  const Trace t0 = trace::read_trace(files[0]), t1 = trace::read_trace(files[1]);
  EXPECT_EQ(t0.meta.job.launcher, "torchrun");
  EXPECT_EQ(t1.meta.job.world_size, 2);
  EXPECT_EQ(t1.meta.job.local_rank, 1);
  EXPECT_FALSE(t0.meta.job.job_id.empty());
  EXPECT_EQ(t0.meta.job.job_id, t1.meta.job.job_id);
  const double p0 = mib(max_mem(t0)), p1 = mib(max_mem(t1));
  // Rank 1 holds 100 MiB beyond the same model, rank 0 50 MiB.
  EXPECT_NEAR(p1 - p0, 50.0, 10.0);
  const Result sum = qprof({"peak", "--sum", "--metric", "rss", files[0], files[1]});
  ASSERT_EQ(sum.status, 0) << sum.err;
  EXPECT_GE(first_number(sum.out), 0.95 * (p0 + p1));
  EXPECT_LE(first_number(sum.out), p0 + p1 + 0.001);
  const Result report = qprof({"report", "--sum", "--metric", "rss", "--format", "json", files[0], files[1]});
  ASSERT_EQ(report.status, 0) << report.err;
  const auto doc = nlohmann::json::parse(report.out);
  ASSERT_EQ(doc["stages"].size(), 1u);
  EXPECT_EQ(doc["stages"][0]["stage"], "Train");
  EXPECT_EQ(doc["stages"][0]["ranks"], 2);
}

}  // namespace
}  // namespace qprof::test
