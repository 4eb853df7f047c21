// SPDX-License-Identifier: Apache-2.0
// qprof fit --gpu without a GPU: the fake libnvidia-ml.so.1 reports an H100, the fake
// nvidia-cuda-mps-control (tests/fakes) records its start and quit, and gpu_limit_job
// (tests/workloads) holds a known amount on the fake GPU and fails with PyTorch's
// out-of-memory message under a smaller CUDA_MPS_PINNED_DEVICE_MEM_LIMIT. The search's answer,
// each outcome, the cleanup (on SIGTERM too) and each refusal are checked against that truth.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "e2e_util.hpp"
#include "unit/gpu_test_util.hpp"

namespace qprof::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
constexpr Bytes kMiB = Bytes{1} << 20;
constexpr const char* kUuid = "GPU-1f2e3d4c-0000-1111-2222-333344445555";

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

bool process_gone(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return true;
  const auto close = stat.rfind(')');
  return close != std::string::npos && stat.size() > close + 2 && stat[close + 2] == 'Z';
}

// One fit's fakes: the GPU, the control program's record, the job's PID files.
class GpuFit {
 public:
  explicit GpuFit(const std::string& device_extra = "")
      : script_(std::string("driver 580.95.05\ndevice ") + kUuid + " 85899345920 0 NVIDIA H100 80GB HBM3\n" +
                device_extra) {
    fs::create_directories(pids());
  }
  std::string record() const { return dir_.file("record"); }
  std::string pids() const { return dir_.file("pids"); }
  std::vector<std::string> env() const {
    const char* path = ::getenv("PATH");
    return {"env",
            "-u",
            "CUDA_MPS_PIPE_DIRECTORY",
            "QPROF_NVML_LIBRARY=" + fake_nvml(),
            "QPROF_FAKE_NVML_SCRIPT=" + script_.path(),
            "PATH=" + fake_scripts_dir() + ":" + (path ? path : "/usr/bin:/bin"),
            "QPROF_FAKE_MPS_RECORD=" + record(),
            "GPU_LIMIT_JOB_PIDS=" + pids()};
  }
  // qprof fit ARGS -- gpu_limit_job SCRIPT JOB...
  std::vector<std::string> argv(const std::vector<std::string>& args, const std::vector<std::string>& job,
                                const std::vector<std::string>& extra_env = {}) const {
    std::vector<std::string> a = env();
    a.insert(a.end(), extra_env.begin(), extra_env.end());
    a.push_back(qprof_bin());
    a.push_back("fit");
    a.insert(a.end(), args.begin(), args.end());
    a.push_back("--");
    a.push_back(workload("gpu_limit_job"));
    a.push_back(script_.path());
    a.insert(a.end(), job.begin(), job.end());
    return a;
  }
  std::vector<std::vector<std::string>> record_lines() const {
    std::vector<std::vector<std::string>> lines;
    std::ifstream in(record());
    for (std::string line; std::getline(in, line);) {
      std::istringstream words(line);
      std::vector<std::string> w;
      for (std::string s; words >> s;) w.push_back(s);
      lines.push_back(w);
    }
    return lines;
  }
  // The daemon started once, with its own directories and this GPU only, and quit; nothing of
  // it nor of any probe is left.
  void expect_clean() const {
    const auto lines = record_lines();
    ASSERT_EQ(lines.size(), 2u) << read_file(record());
    ASSERT_EQ(lines[0].size(), 5u);
    EXPECT_EQ(lines[0][0], "start");
    EXPECT_EQ(lines[1][0], "quit");
    EXPECT_EQ(lines[0][1], lines[1][1]) << "quit went to the daemon fit started";
    EXPECT_NE(lines[0][1], "/tmp/nvidia-mps");
    EXPECT_NE(lines[0][2], "-") << "a log directory of its own";
    EXPECT_EQ(lines[0][3], kUuid) << "the daemon's server sees this GPU only";
    EXPECT_FALSE(fs::exists(lines[0][1])) << "the daemon's directories are removed";
    EXPECT_TRUE(process_gone(std::stoi(lines[0][4]))) << "the daemon is gone";
    int probes = 0;
    for (const auto& e : fs::directory_iterator(pids())) {
      ++probes;
      EXPECT_TRUE(process_gone(std::stoi(e.path().filename().string()))) << "a probe's process is left";
    }
    EXPECT_GT(probes, 0);
  }
  // The limits the job's processes saw (-1: none), from their PID files.
  std::vector<long> limits_seen() const {
    std::vector<long> limits;
    for (const auto& e : fs::directory_iterator(pids())) {
      std::ifstream in(e.path());
      long l = 0;
      if (in >> l) limits.push_back(l);
    }
    return limits;
  }

 private:
  FakeNvmlScript script_;
  ScratchDir dir_;
};

json load(const std::string& path) { return json::parse(read_file(path)); }

// The limit at the full-speed finding, and the tree's peak on the device in that run.
std::pair<Bytes, Bytes> full_speed(const json& j) {
  const json& f = j["findings"]["full_speed"];
  const json& run = f["probe"].is_null() ? j["baseline"] : j["probes"][f["probe"].get<std::size_t>()];
  return {f["limit_bytes"].get<Bytes>(), run["gpu_peak_bytes"].get<Bytes>()};
}

std::string mib_text(Bytes b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / kMiB);
  return buf;
}

// Context 500 MiB + 1000 MiB: the job runs in 1500 MiB of device memory per process, exactly;
// unlimited, its allocator caches 300 MiB more.
TEST(FitGpu, FindsTheKnownNeedWithinOneResolutionStepAndCleansUp) {
  GpuFit f;
  const std::string out = temp_dir() + "/gpu1.json", csv = temp_dir() + "/gpu1.csv";
  const Result r = run(f.argv({"--gpu", "--resolution", "16MiB", "--json", out, "--csv", csv},
                              {"500", "1000", "300", "1", "300", "300"}));
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = load(out);
  ASSERT_EQ(j["end"], "searched") << r.err;
  ASSERT_FALSE(j["findings"]["smallest_running"].is_null()) << r.err;
  const Bytes runs_in = j["findings"]["smallest_running"]["limit_bytes"].get<Bytes>();
  const Bytes short_of = j["findings"]["smallest_running"]["short_of_bytes"].get<Bytes>();
  EXPECT_GE(runs_in, 1500 * kMiB) << r.err;
  EXPECT_LE(runs_in, 1516 * kMiB) << r.err;
  EXPECT_LT(short_of, 1500 * kMiB);
  EXPECT_EQ(j["baseline"]["gpu_peak_bytes"].get<Bytes>(), 1800 * kMiB);
  EXPECT_EQ(j["gpu"]["floor_bytes"].get<Bytes>(), 500 * kMiB) << "the context alone, first seen";
  EXPECT_EQ(j["gpu"]["uuid"], kUuid);
  EXPECT_EQ(j["baseline"]["torch_allocated_peak_bytes"].get<Bytes>(), 1000 * kMiB);
  EXPECT_EQ(j["baseline"]["torch_reserved_peak_bytes"].get<Bytes>(), 1002 * kMiB);
  int ooms = 0, completed = 0;
  for (const json& p : j["probes"]) {
    const Bytes l = p["limit_bytes"].get<Bytes>();
    if (p["outcome"] == "cuda_oom") {
      ++ooms;
      EXPECT_TRUE(contains(p["detail"].get<std::string>(), "torch.OutOfMemoryError: CUDA out of memory")) << p;
      EXPECT_LT(l, 1500 * kMiB);
    } else {
      ++completed;
      EXPECT_EQ(p["outcome"], "completed") << p;
      EXPECT_GE(l, 1500 * kMiB);
      EXPECT_EQ(p["gpu_peak_bytes"].get<Bytes>(), l) << "the job fills what the limit gives it";
    }
  }
  EXPECT_GT(ooms, 0);
  EXPECT_GT(completed, 0);
  // The limits reached the job in MPS's spelling, whole MiB, for its device 0.
  for (long l : f.limits_seen()) EXPECT_TRUE(l == -1 || (l >= 500 && l <= 1800)) << l;
  const auto [limit, held] = full_speed(j);
  EXPECT_EQ(held, limit) << "one process";
  const std::string said = joined(r.err);  // the lines fit 80 columns: a sentence may wrap
  EXPECT_TRUE(contains(said, "qprof fit: per process, smallest limit not OOM-killed: ")) << r.err;
  EXPECT_TRUE(contains(said, "device memory to ask for: " + mib_text(held) + " on GPU 0")) << r.err;
  EXPECT_TRUE(contains(said, "host memory is not limited")) << r.err;
  EXPECT_TRUE(contains(said, "dmem")) << r.err;
  std::istringstream lines(r.err);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 80u) << line;
  EXPECT_TRUE(contains(read_file(csv), ",gpu_peak_bytes,torch_allocated_bytes,torch_reserved_bytes\n"));
  f.expect_clean();
}

// Two processes, each a context and 1000 MiB: the limit is per process (1500 MiB), the device
// holds both (twice what each holds).
TEST(FitGpu, TheLimitIsPerProcessAndTheRequestIsTheTreesPeak) {
  GpuFit f;
  const std::string out = temp_dir() + "/gpu2.json";
  const Result r =
      run(f.argv({"--gpu=0", "--resolution", "16MiB", "--json", out}, {"500", "1000", "300", "2", "300", "300"}));
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = load(out);
  const Bytes runs_in = j["findings"]["smallest_running"]["limit_bytes"].get<Bytes>();
  EXPECT_GE(runs_in, 1500 * kMiB) << r.err;
  EXPECT_LE(runs_in, 1516 * kMiB) << r.err;
  EXPECT_EQ(j["baseline"]["gpu_peak_bytes"].get<Bytes>(), 3600 * kMiB);
  const auto [limit, held] = full_speed(j);
  EXPECT_EQ(held, 2 * limit) << "two processes at the limit each";
  EXPECT_TRUE(contains(joined(r.err), "device memory to ask for: " + mib_text(held) + " on GPU 0")) << r.err;
  f.expect_clean();
}

// Context 100 MiB + 200 MiB, and 400 MiB of cache unlimited. Below 275 MiB the job fails
// otherwise, below 300 it is out of device memory, with less than its cache it crawls: each
// outcome appears, said as such, and the levels' boundaries are found.
TEST(FitGpu, EachOutcomeIsSaidAsSuch) {
  GpuFit f;
  const std::string out = temp_dir() + "/gpu3.json";
  const Result r = run(f.argv({"--gpu", "--resolution", "16MiB", "--max-slowdown", "2", "--json", out},
                              {"100", "200", "300", "1", "400", "6000", "275"}));
  ASSERT_EQ(r.status, 0) << r.err;
  const json j = load(out);
  std::map<std::string, int> seen;
  for (const json& p : j["probes"]) {
    const Bytes l = p["limit_bytes"].get<Bytes>();
    const std::string outcome = p["outcome"], detail = p["detail"];
    ++seen[outcome];
    if (l < 275 * kMiB) {
      EXPECT_EQ(outcome, "failed") << l;
      EXPECT_TRUE(contains(detail, "exit status 3, no CUDA out-of-memory message")) << detail;
      EXPECT_TRUE(contains(detail, "cannot read the dataset")) << detail;
    } else if (l < 300 * kMiB) {
      EXPECT_EQ(outcome, "cuda_oom") << l;
      EXPECT_TRUE(contains(detail, "exit status 1: torch.OutOfMemoryError: CUDA out of memory")) << detail;
    } else {
      EXPECT_EQ(outcome, "too_slow") << l;
      EXPECT_TRUE(contains(detail, "stopped by qprof")) << detail;
    }
  }
  EXPECT_GT(seen["failed"], 0) << r.err;
  EXPECT_GT(seen["cuda_oom"], 0) << r.err;
  EXPECT_GT(seen["too_slow"], 0) << r.err;
  const json& runs = j["findings"]["smallest_running"];
  EXPECT_GE(runs["limit_bytes"].get<Bytes>(), 300 * kMiB) << "too slow still runs";
  EXPECT_LE(runs["limit_bytes"].get<Bytes>(), 316 * kMiB);
  const json& within = j["findings"]["smallest_within_slowdown"];
  EXPECT_TRUE(within["probe"].is_null()) << "only the unlimited run completed";
  EXPECT_EQ(within["limit_bytes"].get<Bytes>(), 700 * kMiB);
  EXPECT_GE(within["short_of_bytes"].get<Bytes>(), 684 * kMiB);
  EXPECT_TRUE(contains(joined(r.err), "CUDA OOM")) << r.err;
  f.expect_clean();
}

// SIGTERM while a limited probe runs: fit stops, the probe's processes and the daemon go.
TEST(FitGpu, SigtermMidProbeQuitsTheDaemonAndLeavesNoProbe) {
  for (int sig : {SIGTERM, SIGHUP}) {
    GpuFit f;
    Process p(f.argv({"--gpu"}, {"500", "1000", "4000", "2"}));
    bool limited = false;
    for (int i = 0; i < 400 && !limited; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      for (long l : f.limits_seen()) limited = limited || l > 0;
    }
    ASSERT_TRUE(limited) << "no limited probe started";
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    ::kill(p.pid(), sig);
    const Result r = p.wait(60);
    EXPECT_EQ(r.status, 128 + sig) << r.err;
    EXPECT_TRUE(contains(joined(r.err), "before the search ended")) << r.err;
    f.expect_clean();
  }
}

// A listening socket where another daemon's control socket would be.
class OtherDaemon {
 public:
  OtherDaemon() {
    fd_ = ::socket(AF_UNIX, SOCK_STREAM, 0);
    sockaddr_un a{};
    a.sun_family = AF_UNIX;
    const std::string path = dir_.file("control");
    std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    EXPECT_EQ(::listen(fd_, 4), 0);
  }
  ~OtherDaemon() { ::close(fd_); }
  void stop() { ::close(std::exchange(fd_, -1)); }  // the socket file stays: a daemon that died
  const std::string& dir() const { return dir_.path(); }

 private:
  ScratchDir dir_;
  int fd_ = -1;
};

TEST(FitGpu, RefusesWithTheReasonAndStartsNothing) {
  struct Case {
    std::string name, device_extra;
    std::vector<std::string> env;
    std::string expected;
  };
  OtherDaemon other;
  const std::vector<Case> cases{
      {"no GPU", "", {"QPROF_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1"}, "no NVIDIA GPU found"},
      {"exclusive process", "compute_mode 3\n", {}, "compute mode is Exclusive_Process"},
      {"prohibited", "compute_mode 2\n", {}, "compute mode is Prohibited"},
      {"MIG", "mig_mode 1\n", {}, "GPU 0 has MIG mode on"},
      {"other daemon", "", {"CUDA_MPS_PIPE_DIRECTORY=" + other.dir()}, "another CUDA MPS control daemon answers in"},
      {"no control program", "", {"PATH=/usr/bin:/bin"}, "no nvidia-cuda-mps-control on PATH"},
      {"no such GPU", "", {}, "no NVIDIA GPU 3"},
  };
  for (const Case& c : cases) {
    GpuFit f(c.device_extra);
    const std::string out = temp_dir() + "/refused.json";
    const Result r =
        run(f.argv({c.name == "no such GPU" ? "--gpu=3" : "--gpu", "--json", out}, {"500", "1000", "100", "1"}, c.env));
    EXPECT_EQ(r.status, 2) << c.name << ": " << r.err;
    EXPECT_TRUE(contains(joined(r.err), c.expected)) << c.name << ": " << r.err;
    EXPECT_FALSE(fs::exists(f.record())) << c.name << ": no daemon was started";
    EXPECT_TRUE(fs::is_empty(f.pids())) << c.name << ": the job never ran";
    EXPECT_FALSE(fs::exists(out)) << c.name;
  }
  // A socket nobody listens on any more is a daemon that died, not one in use.
  other.stop();
  GpuFit f;
  const Result r = run(f.argv({"--gpu", "--resolution", "64MiB"}, {"500", "1000", "100", "1"},
                              {"CUDA_MPS_PIPE_DIRECTORY=" + other.dir()}));
  EXPECT_EQ(r.status, 0) << r.err;
}

TEST(FitGpu, AControlProgramThatRefusesIsSaid) {
  GpuFit f;
  const Result r = run(f.argv({"--gpu"}, {"500", "1000", "100", "1"},
                              {"QPROF_FAKE_MPS_REFUSE=An instance of this daemon is already running"}));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "cannot start a CUDA MPS control daemon")) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "An instance of this daemon is already running")) << r.err;
  EXPECT_TRUE(fs::is_empty(f.pids()));
}

TEST(FitGpu, AJobThatFailsUnlimitedIsNotFitted) {
  GpuFit f;
  const Result r = run(f.argv({"--gpu"}, {"500"}));  // too few arguments: its usage, exit 2
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_TRUE(contains(joined(r.err), "failed in the unlimited run")) << r.err;
  const auto lines = f.record_lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1][0], "quit");
}

}  // namespace
}  // namespace qprof::test
