// SPDX-License-Identifier: Apache-2.0
// Readers scale with their input: traces of growing size in each shape that once made a reader
// quadratic or unbounded (many processes, stages, directories, GPU devices), each command timed
// at N and 4N records and its peak RSS read back. Time must grow near-linearly (under 8× for 4×
// the records, with a floor for timer noise) and memory stay bounded; each run has a memory
// limit and a deadline of its own, so a regression fails here instead of eating the machine.
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "e2e_util.hpp"

namespace qprof::test {
namespace {

namespace fs = std::filesystem;

constexpr double kStart = 1795255547.0;
constexpr long kMaxRssKiB = 400 * 1024;  // every run here needs tens of MiB; the old ones, gigabytes
// AddressSanitizer's shadow memory and quarantine roughly double a process's RSS.
long max_rss_kib() { return sanitized() ? 3 * kMaxRssKiB : kMaxRssKiB; }
constexpr int kDeadline = 60;  // seconds; the old `report` of 20 000 directories took minutes

struct Measure {
  int status = -1;  // exit status, or 128 + signal (SIGKILL at the deadline)
  double seconds = 0;
  long max_rss_kib = 0;
  std::string err;
};

// qprof ARGS with stdout to `out` (or /dev/null), under 2 GiB of address space and a deadline.
Measure measure(const std::vector<std::string>& args, const std::string& out = "/dev/null") {
  const std::string err_path = temp_dir() + "/scaling_err.txt";
  std::vector<std::string> argv{qprof_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (std::string& a : argv) cargv.push_back(a.data());
  cargv.push_back(nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (!sanitized()) {  // ASan's shadow memory cannot live under RLIMIT_AS
      const rlimit as{rlim_t{2} << 30, rlim_t{2} << 30};
      ::setrlimit(RLIMIT_AS, &as);
    }
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0) ::_exit(127);
    ::dup2(o, 1);
    ::dup2(e, 2);
    ::alarm(kDeadline);  // survives exec: SIGALRM ends a run that lost its bound
    ::execv(cargv[0], cargv.data());
    ::_exit(127);
  }
  Measure m;
  int status = 0;
  rusage usage{};
  if (pid < 0 || ::wait4(pid, &status, 0, &usage) != pid) return m;
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  m.max_rss_kib = usage.ru_maxrss;
  m.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  m.err = read_file(err_path);
  return m;
}

using Writer = std::function<void(std::FILE*, int)>;

// A qprof trace: the header, a first and last MEM line, and `body` for records 0 … n−1.
std::string trace_of(const std::string& name, int n, const Writer& body) {
  const std::string path = temp_dir() + "/" + name + "_" + std::to_string(n) + ".dat";
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return path;
  std::fprintf(f, "QPROF 1 version=0.1 interval=0.01 host=h root_pid=1 start=%.6f metric=rss\nCMDLINE x\n", kStart);
  std::fprintf(f, "MEM 1.0 %.4f\n", kStart);
  for (int i = 0; i < n; ++i) body(f, i);
  std::fprintf(f, "MEM 1.0 %.4f\nEXIT %.6f status=0\n", kStart + 200, kStart + 200);
  std::fclose(f);
  return path;
}

// Runs `args` (the trace's path appended) on the traces of n and 4n records.
void expect_linear(const std::string& shape, int n, const Writer& body, const std::vector<std::string>& args) {
  Measure m[2];
  for (int k = 0; k < 2; ++k) {
    std::vector<std::string> a = args;
    a.push_back(trace_of(shape, k == 0 ? n : 4 * n, body));
    m[k] = measure(a);
    ASSERT_EQ(m[k].status, 0) << shape << " " << args.front() << " of " << (k == 0 ? n : 4 * n) << ": " << m[k].err;
    EXPECT_LT(m[k].max_rss_kib, max_rss_kib()) << shape << " " << args.front();
  }
  // 0.1 s floor: a run of a few milliseconds measures the machine's load, not the reader.
  EXPECT_LT(m[1].seconds, 8 * std::max(m[0].seconds, 0.1))
      << shape << " " << args.front() << ": " << m[0].seconds << " s for " << n << ", " << m[1].seconds << " s for "
      << 4 * n;
}

// Each child sampled at the start and at the end: a per-process series spans the whole chart.
const Writer kWideChildren = [](std::FILE* f, int i) {
  std::fprintf(f, "CHLD %d 1.5 %.4f\nCHLD %d 2.5 %.4f\n", 1000 + i, kStart + i * 1e-4, 1000 + i,
               kStart + 100 + i * 1e-4);
};
const Writer kStages = [](std::FILE* f, int i) {
  std::fprintf(f, "MARK %.6f s%d Start\nMARK %.6f s%d End\n", kStart + i * 1e-3, i, kStart + i * 1e-3 + 5e-4, i);
};
const Writer kDirectories = [](std::FILE* f, int i) {
  std::fprintf(f, "DIRDEF %d /data/d%d\nDIR %.6f %d 1 2 3\n", i, i, kStart + i * 1e-3, i);
};
const Writer kDevices = [](std::FILE* f, int i) {
  std::fprintf(f, "GPUDEV %d GPU-%d 1000 dev\nGPU %.6f %d 10 20\n", i, i, kStart + i * 1e-3, i);
};
// One MEM line and one new process per sample, as `run -M` writes a tree that keeps forking.
const Writer kForkingTree = [](std::FILE* f, int i) {
  std::fprintf(f, "MEM 2.0 %.4f\nCHLD %d 1.5 %.4f\n", kStart + i * 0.01, 1000 + i, kStart + i * 0.01);
};

TEST(Scaling, PlotOfManyProcessesDrawsAnEnvelope) {
  const std::string png = temp_dir() + "/children.png";
  expect_linear("wide_children", 2000, kWideChildren, {"plot", "--children", "-o", png});
}

TEST(Scaling, FourteenThousandProcessesPlotUnderTwoGibibytes) {
  // 0.6 MB of trace once took ≈ 172 KB a process and aborted with std::bad_alloc.
  const Measure m =
      measure({"plot", "--children", "-o", temp_dir() + "/c14k.png", trace_of("c14k", 14000, kWideChildren)});
  EXPECT_EQ(m.status, 0) << m.err;
  EXPECT_LT(m.max_rss_kib, max_rss_kib());
}

TEST(Scaling, ReportAndCompareOfManyStages) {
  expect_linear("stages", 20000, kStages, {"report"});
  expect_linear("stages", 5000, kStages, {"compare", "--stages"});
  // The stage table holds a stated number of rows and says how many more there were.
  const std::string out = temp_dir() + "/stages_report.txt";
  ASSERT_EQ(measure({"report", trace_of("stages", 20000, kStages)}, out).status, 0);
  EXPECT_NE(read_file(out).find("10000 more stages not shown"), std::string::npos);
}

TEST(Scaling, ReportAndPlotOfManyDirectories) {
  expect_linear("dirs", 5000, kDirectories, {"report"});
  expect_linear("dirs", 5000, kDirectories, {"plot", "-o", temp_dir() + "/dirs.png"});
}

TEST(Scaling, ReportAndPlotOfManyGpuDevices) {
  expect_linear("gpus", 5000, kDevices, {"report"});
  expect_linear("gpus", 5000, kDevices, {"plot", "-o", temp_dir() + "/gpus.png"});
}

// An export's size grows with its input, not with processes × samples.
TEST(Scaling, ExportOfATreeThatKeepsForking) {
  for (const std::string format : {"csv", "json"}) {
    std::uintmax_t size[2];
    for (int k = 0; k < 2; ++k) {
      const int n = k == 0 ? 5000 : 20000;
      const std::string in = trace_of("forking", n, kForkingTree), out = temp_dir() + "/forking." + format;
      const Measure m = measure({"export", "--format", format, in}, out);
      ASSERT_EQ(m.status, 0) << m.err;
      size[k] = fs::file_size(out);
      EXPECT_LT(size[k], 16 * fs::file_size(in)) << format << ": the export of " << n << " processes";
      if (k == 1) {
        EXPECT_NE(m.err.find("beyond the first 64"), std::string::npos) << m.err;
      }
    }
    EXPECT_LT(size[1], 8 * size[0]) << format;
  }
}

// A run's trace as `run -M` writes it, `n` samples at 10 ms: MEM, a child's CHLD and CGROUP every
// sample; PSS, IO, CPU, KINDS, TASKS and the cgroup's parts every tenth; a stage every 5 %.
// `rank`: the header's job fields of that rank ("" for none); its samples `lag` seconds later.
std::string recorded_trace(const std::string& name, int n, const std::string& rank = "", double lag = 0) {
  const std::string path = temp_dir() + "/" + name + "_" + std::to_string(n) + ".dat";
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return path;
  std::fprintf(f, "QPROF 1 version=0.1 interval=0.01 host=h root_pid=1 start=%.6f metric=all%s\nCMDLINE x\n", kStart,
               rank.c_str());
  const int stage = n / 20;
  for (int i = 0; i < n; ++i) {
    const double t = kStart + lag + i * 0.01, mib = 100 + (i % stage) * 0.01 + i % 7;
    const auto bytes = static_cast<unsigned long long>(mib * 1048576);
    std::fprintf(f, "MEM %.6f %.4f\nCHLD 2 %.6f %.4f\nCGROUP %.6f %llu %llu\n", mib, t, mib - 1, t, t, bytes, bytes);
    if (i % 10 == 0) {
      std::fprintf(f, "PSS %.6f %llu %llu %llu\nIO %.6f %lld 0 0 0\nCPU %.6f %.6f\n", t, bytes, bytes / 2, bytes / 3, t,
                   i * 4096LL, t, i * 0.001);
      std::fprintf(f, "KINDS %.6f %llu 0 0 0\nTASKS %.6f 2 4 %llu\nCGROUP %.6f %llu %llu %llu 0\n", t, bytes, t,
                   2 * bytes, t, bytes, bytes, bytes / 2);
    }
    if (i % stage == stage / 4) std::fprintf(f, "MARK %.6f step%d Start\n", t, i / stage);
    if (i % stage == stage - 1) std::fprintf(f, "MARK %.6f step%d End\n", t, i / stage);
  }
  std::fprintf(f, "PEAK cgroup %llu\nEXIT %.6f status=0\n", 200ull << 20, kStart + n * 0.01);
  std::fclose(f);
  return path;
}

// report, compare and the Perfetto export read a trace of any length in flat memory: 1 M
// samples (100 MB) took 100 to 300 MiB when they held every sample.
TEST(Scaling, ReportCompareAndPerfettoExportStayUnder64MiB) {
  // Under AddressSanitizer a million samples read several times take minutes (the first of these
  // took 173 s of ctest's 180); the memory bound has no meaning there. The release build runs it.
  if (sanitized()) GTEST_SKIP() << "a 1 M-sample trace is the release build's: minutes under AddressSanitizer";
  constexpr long kBoundKiB = 64 * 1024;
  const std::string a = recorded_trace("bounded_a", 1000000), b = recorded_trace("bounded_b", 200000);
  const std::vector<std::vector<std::string>> commands = {{"report", a},
                                                          {"report", "--format", "json", "--metric", "rss", a},
                                                          {"report", "--yaml", "-", a},
                                                          {"compare", "--stages", a, b},
                                                          {"export", "--format", "perfetto", a}};
  for (const auto& args : commands) {
    const Measure m = measure(args);
    ASSERT_EQ(m.status, 0) << args.front() << ": " << m.err;
    if (!sanitized()) {
      EXPECT_LT(m.max_rss_kib, kBoundKiB) << args.front() << " " << args[1];
    }
  }
}

// A job's ranks summed (report --sum, plot --sum, compare's job row) stream from their files:
// two ranks of 1 M samples took 370 to 450 MiB when each was held whole and summed in memory.
TEST(Scaling, JobSumOfRanksStaysUnder64MiB) {
  // Under AddressSanitizer a million samples read several times take minutes (the first of these
  // took 173 s of ctest's 180); the memory bound has no meaning there. The release build runs it.
  if (sanitized()) GTEST_SKIP() << "a 1 M-sample trace is the release build's: minutes under AddressSanitizer";
  constexpr long kBoundKiB = 64 * 1024;
  const std::string r0 = recorded_trace("rank0", 1000000, " rank=0 world_size=2 job=7");
  const std::string r1 = recorded_trace("rank1", 1000000, " rank=1 world_size=2 job=7", 0.005);
  const std::string out = temp_dir() + "/job_sum_out.txt";
  // What each prints that only the sum gives.
  const std::vector<std::pair<std::vector<std::string>, std::string>> commands = {
      {{"report", "--sum", "--format", "csv", "--table", "hosts", r0, r1}, "h,2,"},
      {{"plot", "--sum", "-o", "-", r0, r1}, "job (2 ranks"},
      {{"compare", "--format", "csv", r0, r1}, "job (2 ranks),job,"}};
  for (const auto& [args, says] : commands) {
    const Measure m = measure(args, out);
    ASSERT_EQ(m.status, 0) << args.front() << ": " << m.err;
    EXPECT_NE(read_file(out).find(says), std::string::npos) << args.front() << ": " << read_file(out);
    if (!sanitized()) {
      EXPECT_LT(m.max_rss_kib, kBoundKiB) << args.front() << " " << args[1];
    }
  }
}

// A job of many ranks, in a directory another user may read: 1000 samples a rank, each rank a
// few ms after the one before.
const std::vector<std::string>& many_ranks() {
  static const std::vector<std::string> ranks = [] {
    const std::string dir = fs::path(copy_for_other_users(qprof_bin())).parent_path().string();
    std::vector<std::string> out;
    for (int r = 0; r < 256; ++r) {
      const std::string job = " rank=" + std::to_string(r) + " world_size=256 job=9";
      const std::string path = recorded_trace("many_ranks" + std::to_string(r), 1000, job, r * 0.003);
      out.push_back(dir + "/" + fs::path(path).filename().string());
      fs::rename(path, out.back());
      fs::permissions(out.back(), fs::perms::others_read, fs::perm_options::add);  // whatever the umask
    }
    return out;
  }();
  return ranks;
}

// Summing many ranks costs neither a thread, nor an open file, nor MiBs a rank, and 4× the ranks
// about 4× the time: each rank was read by a thread of its own (a 1 MiB buffer each), and the merge
// looked through every rank for each sample (4× the ranks took 16× the time).
TEST(Scaling, JobSumOfManyRanksIsLinearInFlatMemory) {
  const std::string out = temp_dir() + "/many_ranks_out.txt";
  Measure m[2];
  for (int k = 0; k < 2; ++k) {
    const std::size_t n = k == 0 ? 64 : 256;
    std::vector<std::string> args{"report", "--sum", "--format", "csv", "--table", "hosts"};
    args.insert(args.end(), many_ranks().begin(), many_ranks().begin() + static_cast<std::ptrdiff_t>(n));
    m[k] = measure(args, out);
    ASSERT_EQ(m[k].status, 0) << n << " ranks: " << m[k].err;
    EXPECT_NE(read_file(out).find("h," + std::to_string(n) + ","), std::string::npos) << read_file(out);
    if (!sanitized()) {
      EXPECT_LT(m[k].max_rss_kib, 64 * 1024) << n << " ranks";
    }
  }
  EXPECT_LT(m[1].seconds, 8 * std::max(m[0].seconds, 0.1))
      << m[0].seconds << " s for 64 ranks, " << m[1].seconds << " s for 256";
}

// A limit of 32 open files, and of 32 processes and threads for the user (a login node's, a
// container's): the sum of 256 ranks is still read. A thread a rank ended qprof on
// std::system_error (SIGABRT) past the limit on processes.
TEST(Scaling, JobSumOfManyRanksUnderLimitsOnFilesAndThreads) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to run qprof as another user (RLIMIT_NPROC spares root)";
  std::vector<std::string> argv{"runuser",    "-u",      "nobody",
                                "--",         "prlimit", "--nofile=32",
                                "--nproc=32", "--",      copy_for_other_users(qprof_bin()),
                                "report",     "--sum",   "--format",
                                "csv",        "--table", "hosts"};
  argv.insert(argv.end(), many_ranks().begin(), many_ranks().end());
  const Result r = run(argv, "", kDeadline);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.out.find("h,256,"), std::string::npos) << r.out;
}

// The few ranks of a node have a reader thread each; with no thread to be had (a limit of one
// process for the user: qprof itself), they are read on the merging thread, with the same sum.
TEST(Scaling, JobSumOfFewRanksWithNoThreadToBeHad) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root, to run qprof as another user (RLIMIT_NPROC spares root)";
  if (sanitized()) GTEST_SKIP() << "LeakSanitizer's check at exit needs a thread, which a limit of one process refuses";
  const std::string qprof = copy_for_other_users(qprof_bin());
  const std::vector<std::string> ranks(many_ranks().begin(), many_ranks().begin() + 4);
  std::vector<std::string> sum{"report", "--sum", "--format", "json"};
  sum.insert(sum.end(), ranks.begin(), ranks.end());
  std::vector<std::string> limited{"runuser", "-u", "nobody", "--", "prlimit", "--nproc=1", "--", qprof};
  limited.insert(limited.end(), sum.begin(), sum.end());
  sum.insert(sum.begin(), {"runuser", "-u", "nobody", "--", qprof});
  const Result free = run(sum, "", kDeadline), bound = run(limited, "", kDeadline);
  ASSERT_EQ(free.status, 0) << free.err;
  EXPECT_EQ(bound.status, 0) << bound.err;
  EXPECT_EQ(bound.out, free.out);
}

// Out of memory is exit 2 naming the trace, never an abort.
TEST(Scaling, OutOfMemoryIsExitTwoNamingTheTrace) {
  if (sanitized()) GTEST_SKIP() << "RLIMIT_AS cannot bound an AddressSanitizer build";
  const std::string trace = trace_of("oom_stages", 300000, kStages);
  const Result r = run({"prlimit", as_limit("209715200"), "--", qprof_bin(), "report", trace}, "", kDeadline);
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(trace + ": too large to"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace qprof::test
