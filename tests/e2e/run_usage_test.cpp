// SPDX-License-Identifier: Apache-2.0
// Memory by kind, task counts and the per-stage bottleneck, end to end: workloads whose file-
// backed, shared-memory, thread and process figures are known by construction.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::test {
using trace::MemKindsSample;
using trace::TasksSample;
using trace::Trace;

namespace {

const std::string kBound = as_limit("1073741824");

Result bounded_qprof(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {"timeout", "-s", "KILL", "120", "prlimit", kBound, "--", qprof_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

// A directory on a real file system: a file on tmpfs would be shared memory, not file-backed.
std::string disk_dir() {
  const std::string dir = std::string(QPROF_TEST_SCRATCH) + "/usage";
  std::filesystem::create_directories(dir);
  return dir;
}

MemKindsSample largest_kinds(const Trace& t) {
  return *std::max_element(t.kinds.begin(), t.kinds.end(),
                           [](const MemKindsSample& a, const MemKindsSample& b) { return a.rss() < b.rss(); });
}

TEST(RunUsage, MappedFileIsFileBackedNotAnonymous) {
  const std::string out = temp_dir() + "/map_file.dat";
  const std::string file = disk_dir() + "/mapped." + std::to_string(::getpid());
  const Result r = bounded_qprof(
      {"run", "-v", "--stats-interval", "0.05", "-o", out, "--", workload("map_file"), file, "200", "800"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_FALSE(t.kinds.empty());
  const MemKindsSample k = largest_kinds(t);
  // 200 MiB of the file, plus the program's own text and libc's (a few MiB).
  EXPECT_GE(mib(k.file), 199.0);
  EXPECT_LE(mib(k.file), 216.0);
  EXPECT_LT(mib(k.anon), 16.0) << "the file is mapped, not copied";
  EXPECT_LT(mib(k.shmem), 4.0);
  // The split adds up to the RSS the fast path saw at about that moment.
  EXPECT_NEAR(mib(k.rss()), mib(max_mem(t)), 16.0);
  EXPECT_NE(joined(r.err).find("memory kinds"), std::string::npos) << r.err;

  // The metrics: peak, report, export.
  const Result peak = bounded_qprof({"peak", "--metric", "file", out});
  ASSERT_EQ(peak.status, 0) << peak.err;
  const double file_peak = std::stod(peak.out.substr(peak.out.find('\t') + 1));
  EXPECT_NEAR(file_peak, mib(k.file), 0.01);
  const Result report = bounded_qprof({"report", out});
  ASSERT_EQ(report.status, 0) << report.err;
  EXPECT_NE(report.out.find("file-backed"), std::string::npos) << report.out;
  const Result csv = bounded_qprof({"export", "--format", "csv", out});
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_NE(csv.out.find("anon_mib,file_mib,shmem_mib,swap_mib,processes,threads,vsz_mib"), std::string::npos)
      << csv.out.substr(0, 300);
}

TEST(RunUsage, DevShmIsSharedMemory) {
  const std::string out = temp_dir() + "/shm.dat";
  const Result r =
      bounded_qprof({"run", "-q", "--stats-interval", "0.05", "-o", out, "--", workload("shm_fill"), "100", "800"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_FALSE(t.kinds.empty());
  const MemKindsSample k = largest_kinds(t);
  EXPECT_GE(mib(k.shmem), 99.9);
  EXPECT_LE(mib(k.shmem), 101.0);
  EXPECT_LT(mib(k.anon), 16.0);
  const Result peak = bounded_qprof({"peak", "--metric", "shmem", out});
  ASSERT_EQ(peak.status, 0) << peak.err;
  EXPECT_NEAR(std::stod(peak.out.substr(peak.out.find('\t') + 1)), mib(k.shmem), 0.01);
}

TEST(RunUsage, CountsThreadsAndProcessesOfTheTree) {
  const std::string out = temp_dir() + "/tasks.dat";
  const Result r = bounded_qprof(
      {"run", "-v", "--stats-interval", "0.05", "-o", out, "--", workload("thread_tree"), "5", "3", "1000"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_FALSE(t.tasks.empty());
  std::uint64_t threads = 0, processes = 0;
  Bytes vsz = 0;
  for (const TasksSample& s : t.tasks) {
    threads = std::max(threads, s.threads);
    processes = std::max(processes, s.processes);
    vsz = std::max(vsz, s.vsz);
    EXPECT_GE(s.threads, s.processes);
  }
  EXPECT_EQ(processes, 4u) << "the program and its 3 children";
  EXPECT_EQ(threads, 9u) << "1 + 5 threads, and 1 in each child";
  EXPECT_GT(mib(vsz), 5 * 1.0) << "each thread's stack is address space";
  EXPECT_NE(joined(r.err).find("at most 9 threads in 4 processes"), std::string::npos) << r.err;

  // The panels, drawn by gnuplot: the stacked kinds as filled areas, the task counts.
  const std::string script = temp_dir() + "/tasks.gp";
  const Result plot = bounded_qprof(
      {"plot", out, "-o", temp_dir() + "/tasks.png", "--panels", "memory,memory-kinds,tasks,vsz", "--script", script});
  ASSERT_EQ(plot.status, 0) << plot.err;
  const std::string gp = read_file(script);
  std::size_t filled = 0;
  for (std::size_t at = gp.find("filledcurves y1=0 lt"); at != std::string::npos;
       at = gp.find("filledcurves y1=0 lt", at + 1))
    ++filled;
  EXPECT_EQ(filled, 3u) << "anon, file-backed and shmem stacked";
  EXPECT_NE(gp.find("threads, at most 9"), std::string::npos);
  EXPECT_NE(gp.find("processes, at most 4"), std::string::npos);
  EXPECT_GT(std::filesystem::file_size(temp_dir() + "/tasks.png"), 1000u);
}

// A synthetic trace: "Fast Finetune" reads 410 MB/s with its GPU 12 % busy; "Train" keeps its
// GPU 90 % busy while reading as fast.
std::string synthetic_trace(bool with_gpu) {
  std::string s = "QPROF 1 version=test interval=0.100000 host=h root_pid=1 start=1000.000000 metric=rss\n";
  s += "CMDLINE python3 finetune.py\n";
  s += "GPUDEV 0 GPU-aaaa 85899345920 Fake GPU\n";
  const auto line = [&](const std::string& l) { s += l + "\n"; };
  double read = 0, cpu = 0;
  for (int i = 0; i <= 100; ++i) {
    const double t = 1000.0 + 0.1 * i;
    const bool finetune = t < 1005.0;
    char buf[256];
    std::snprintf(buf, sizeof buf, "MEM %.6f %.4f", 100.0 + i, t);
    line(buf);
    if (i == 2) line("MARK 1000.200000 Fast Finetune Start");
    if (i == 48) line("MARK 1004.800000 Fast Finetune End");
    if (i == 52) line("MARK 1005.200000 Train Start");
    if (i == 98) line("MARK 1009.800000 Train End");
    std::snprintf(buf, sizeof buf, "IO %.6f %.0f 0 %.0f 0", t, read, read);
    line(buf);
    std::snprintf(buf, sizeof buf, "CPU %.6f %.6f", t, cpu);
    line(buf);
    if (with_gpu) {
      std::snprintf(buf, sizeof buf, "GPUUTIL %.6f 0 %.1f 5.0 - - -", t, finetune ? 12.0 : 90.0);
      line(buf);
    }
    read += 41e6;  // 410 MB/s
    cpu += 0.05;   // 50 % of one core
  }
  line("EXIT 1010.000000 status=0 signal=0 timed_out=0");
  return s;
}

TEST(ReportBottleneck, FlagsTheStageWhoseGpuIdlesWhileReading) {
  const std::string path = temp_dir() + "/bottleneck.dat";
  std::ofstream(path) << synthetic_trace(true);
  const Result text = bounded_qprof({"report", path});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("Fast Finetune: GPU busy 12 % while reading 410 MB/s: likely input-bound"), std::string::npos)
      << text.out;
  EXPECT_EQ(text.out.find("Train: GPU busy"), std::string::npos) << text.out;

  const Result csv = bounded_qprof({"report", "--format", "csv", path});
  ASSERT_EQ(csv.status, 0) << csv.err;
  EXPECT_NE(csv.out.find("gpu_busy_mean_percent"), std::string::npos) << csv.out;
  EXPECT_NE(csv.out.find("input_bound"), std::string::npos) << csv.out;

  const Result json = bounded_qprof({"report", "--format", "json", path});
  ASSERT_EQ(json.status, 0) << json.err;
  EXPECT_NE(json.out.find("\"input_bound\": true"), std::string::npos) << json.out;
  EXPECT_NE(json.out.find("\"input_bound\": false"), std::string::npos) << json.out;

  const std::string yaml = temp_dir() + "/bottleneck.yaml";
  ASSERT_EQ(bounded_qprof({"report", path, "--yaml", yaml}).status, 0);
  const std::string y = read_file(yaml);
  EXPECT_NE(y.find("stage_bottlenecks:"), std::string::npos) << y;
  EXPECT_NE(y.find("likely input-bound"), std::string::npos) << y;
}

TEST(ReportBottleneck, NoGpuInTheTraceGivesNumbersWithoutAGpuVerdict) {
  const std::string path = temp_dir() + "/bottleneck_nogpu.dat";
  std::ofstream(path) << synthetic_trace(false);
  const Result text = bounded_qprof({"report", path});
  ASSERT_EQ(text.status, 0) << text.err;
  EXPECT_EQ(text.out.find("likely input-bound"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("no GPU verdict"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Bottlenecks per stage"), std::string::npos) << text.out;
  const Result json = bounded_qprof({"report", "--format", "json", path});
  EXPECT_NE(json.out.find("\"cpu_mean_percent\": 50"), std::string::npos) << json.out;
  EXPECT_EQ(json.out.find("gpu_busy_mean_percent"), std::string::npos);
}

// mprof runs a .py with Python; qprof said "command not found". The note is -v's.
TEST(RunMprofHabits, APythonScriptRunsWithThePythonOnPath) {
  const std::string dir = temp_dir() + "/py";
  std::filesystem::create_directories(dir);
  {
    std::ofstream(dir + "/calib.py") << "import sys\nprint('ran', sys.argv[1:])\n";  // not executable
  }
  const std::string trace = dir + "/calib.dat";
  const Result r = run({"sh", "-c", "cd " + dir + " && exec " + qprof_bin() + " run -q -o calib.dat calib.py a b"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(r.out, "ran ['a', 'b']\n");
  EXPECT_EQ(joined(r.err).find("Python script"), std::string::npos) << r.err;  // a note only under -v
  const Result v =
      run({"sh", "-c", "cd " + dir + " && exec " + qprof_bin() + " run -v --no-live -o calib2.dat calib.py"});
  ASSERT_EQ(v.status, 0) << v.err;
  EXPECT_NE(joined(v.err).find("calib.py is a Python script: run with "), std::string::npos) << v.err;
  // peak -- CMD goes through the same launcher.
  const Result peak = run({"sh", "-c", "cd " + dir + " && exec " + qprof_bin() + " peak -- calib.py"});
  EXPECT_EQ(peak.status, 0) << peak.err;
  // Without a Python on PATH: 127, saying why.
  const Result none =
      run({"env", "PATH=/nonexistent", qprof_bin(), "run", "-q", "-o", dir + "/none.dat", dir + "/calib.py"});
  EXPECT_EQ(none.status, 127);
  EXPECT_NE(joined(none.err).find("no python3 or python on PATH"), std::string::npos) << none.err;
}

// --max-peak 4G, -i 10ms were refused; every size and duration takes units.
TEST(RunMprofHabits, SizesAndDurationsTakeUnits) {
  const std::string dir = temp_dir();
  const Result r = bounded_qprof({"run", "-q", "--max-peak", "4G", "-i", "10ms", "--stats-interval", "0.2s",
                                  "--timeout", "1m", "--pss-interval", "1s", "-o", dir + "/units.dat", "true"});
  EXPECT_EQ(r.status, 0) << r.err;
  const Result over = bounded_qprof(
      {"run", "-q", "--max-peak", "1k", "-o", dir + "/over.dat", workload("alloc_tree"), "8", "0", "0", "50"});
  EXPECT_EQ(over.status, 3) << over.err;
  EXPECT_EQ(qprof({"clean", "--older-than", "10ms", "--dry-run", "--dir", dir}).status, 0);
}

// Every refused size or duration says what is accepted.
TEST(RunMprofHabits, ARefusedValueListsWhatIsAccepted) {
  const std::vector<std::vector<std::string>> bad = {
      {"run", "--max-peak", "4 gigs", "true"},
      {"run", "-i", "10 parsecs", "true"},
      {"run", "--timeout", "soon", "true"},
      {"peak", "--max-peak", "lots", "--", "true"},
      {"compare", "--max-growth", "much", "a.dat"},
      {"plot", "--render-timeout", "later", "a.dat"},
      {"plot", "--window", "1h,soon", "-o", temp_dir() + "/w.png", "a.dat"},
      {"fit", "--resolution", "fine", "--", "true"},
  };
  for (const auto& args : bad) {
    const Result r = bounded_qprof(args);
    EXPECT_EQ(r.status, 2) << args[1];
    const bool duration =
        args[1] == "-i" || args[1] == "--timeout" || args[1] == "--render-timeout" || args[1] == "--window";
    for (const char* form :
         duration ? std::vector<const char*>{"10ms", "0.5s", "1m"} : std::vector<const char*>{"4G", "4GiB", "512MiB"}) {
      EXPECT_NE(joined(r.err).find(form), std::string::npos) << args[1] << ": " << r.err;
    }
  }
}

// A metric that the options record no series of is refused before the command runs: after it,
// the budget would go unchecked and the command's own status be lost to a usage error.
TEST(RunUsage, AMetricTheOptionsCannotRecordIsRefusedFirst) {
  const std::string ran = temp_dir() + "/metric_ran";
  const Result gpu = qprof(
      {"run", "--gpu", "none", "--metric", "gpu", "--max-peak", "1M", "-o", temp_dir() + "/g.dat", "--", "touch", ran});
  EXPECT_EQ(gpu.status, 2);
  EXPECT_NE(joined(gpu.err).find("--metric gpu: --gpu none records no GPU memory"), std::string::npos) << gpu.err;
  const Result cgroup = qprof({"run", "--cgroup", "off", "--metric", "cgroup", "--max-peak", "1G", "-o",
                               temp_dir() + "/c.dat", "--", "touch", ran});
  EXPECT_EQ(cgroup.status, 2);
  EXPECT_NE(joined(cgroup.err).find("--metric cgroup: --cgroup off records no cgroup charge"), std::string::npos)
      << cgroup.err;
  EXPECT_FALSE(std::filesystem::exists(ran));
}

}  // namespace
}  // namespace qprof::test
