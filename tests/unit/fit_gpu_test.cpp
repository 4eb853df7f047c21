// SPDX-License-Identifier: Apache-2.0
// fit --gpu's pieces that need no GPU and no run: CUDA's OOM words, the limit's spelling, the
// refusals' words for a device's modes, dmem detection on recorded trees, another daemon's
// socket, the outcome of a probe, and the reports of a fabricated GPU fit.
#include <gtest/gtest.h>

#include <algorithm>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "qprof/fit/gpu_fit.hpp"
#include "qprof/fit/mps_daemon.hpp"
#include "qprof/fit/report.hpp"

namespace qprof::fit {
namespace {

constexpr Bytes kMiB = Bytes{1} << 20;
const std::string kData = std::string(QPROF_TEST_DATA) + "/dmem/";

bool contains(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

TEST(FitGpuUnit, EachOfCudasOomWordsIsFoundAndTheLastLineKept) {
  for (std::string_view word : kCudaOomMessages) {
    const std::string line = "Error: " + std::string(word) + " here";
    EXPECT_EQ(cuda_oom_line("starting\n" + line + "\nbye\n"), line) << word;
  }
  EXPECT_EQ(cuda_oom_line("a\nCUDA out of memory. first\nCUDA out of memory. second\r\n"),
            "CUDA out of memory. second");
  EXPECT_EQ(cuda_oom_line("Segmentation fault\nout of memory\n"), "") << "host words are not CUDA's";
  EXPECT_EQ(cuda_oom_line("CUDA out of memory " + std::string(1000, 'x')).size(), 300u);
}

TEST(FitGpuUnit, TheLimitIsWholeMiBForDeviceZero) {
  EXPECT_EQ(mps_limit_value(1536 * kMiB), "0=1536M");
  EXPECT_EQ(mps_limit_value(1536 * kMiB + 4095), "0=1536M");
}

TEST(FitGpuUnit, ModesThatKeepMpsClientsOutAreRefusedWithTheirName) {
  using gpu::ComputeMode;
  EXPECT_EQ(modes_refusal({ComputeMode::default_mode, false}, 0), "");
  EXPECT_EQ(modes_refusal({std::nullopt, std::nullopt}, 0), "") << "unknown modes: MPS's own start says";
  EXPECT_TRUE(
      contains(modes_refusal({ComputeMode::exclusive_process, false}, 1), "GPU 1's compute mode is Exclusive_Process"));
  EXPECT_TRUE(contains(modes_refusal({ComputeMode::prohibited, false}, 0), "Prohibited"));
  EXPECT_TRUE(contains(modes_refusal({ComputeMode::default_mode, true}, 2), "GPU 2 has MIG mode on"));
}

TEST(FitGpuUnit, DmemIsFoundOnARecordedTreeAndSaidWithWhatEachMethodBounds) {
  const DmemSupport yes = detect_dmem(kData + "linux-6.14-dmem", kData + "linux-6.14-dmem/osrelease");
  EXPECT_TRUE(yes.controller);
  EXPECT_TRUE(yes.kernel_new_enough);
  ASSERT_EQ(yes.regions.size(), 1u);
  EXPECT_EQ(yes.regions[0], "drm/0000:03:00.0/vram0");
  const std::string said = dmem_note(yes);
  EXPECT_TRUE(contains(said, "dmem controller is here (Linux 6.14.2-arch1-1, regions: drm/0000:03:00.0/vram0)"))
      << said;
  EXPECT_TRUE(contains(said, "MPS (used here) bounds each client process's device memory")) << said;
  EXPECT_TRUE(contains(said, "dmem would bound the device memory of a cgroup's processes together")) << said;

  const DmemSupport bare = detect_dmem(kData + "linux-6.14-no-driver", kData + "linux-6.14-no-driver/osrelease");
  EXPECT_TRUE(bare.controller);
  EXPECT_TRUE(bare.regions.empty());
  EXPECT_TRUE(contains(dmem_note(bare), "no driver registers device memory with it"));

  const DmemSupport old = detect_dmem(kData + "linux-6.8", kData + "linux-6.8/osrelease");
  EXPECT_FALSE(old.controller);
  EXPECT_FALSE(old.kernel_new_enough);
  EXPECT_TRUE(contains(dmem_note(old), "is not here (Linux 6.8.0-45-generic; it came with Linux 6.14)"));
  EXPECT_FALSE(detect_dmem(kData + "absent", kData + "absent/osrelease").controller);
}

TEST(FitGpuUnit, AnotherDaemonAnswersOnlyWhileItsSocketListens) {
  char dir[] = "/tmp/qprof-mps-test.XXXXXX";
  ASSERT_NE(::mkdtemp(dir), nullptr);
  EXPECT_FALSE(mps_daemon_answers(dir)) << "no socket";
  const std::string path = std::string(dir) + "/control";
  std::ofstream(path) << "not a socket";
  EXPECT_FALSE(mps_daemon_answers(dir));
  std::filesystem::remove(path);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un a{};
  a.sun_family = AF_UNIX;
  std::strncpy(a.sun_path, path.c_str(), sizeof a.sun_path - 1);
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(fd, 1), 0);
  EXPECT_TRUE(mps_daemon_answers(dir));
  ::close(fd);
  EXPECT_FALSE(mps_daemon_answers(dir)) << "a socket left by a daemon that died";
  std::filesystem::remove_all(dir);
}

TEST(FitGpuUnit, RunToolGivesTheEnvironmentAndTheInputAndKeepsTheOutput) {
  const ToolRun r = run_tool({"/bin/sh", "-c", "read -r x; echo \"$x $QPROF_UNIT_VAR\"; echo err >&2; exit 3"},
                             {{"QPROF_UNIT_VAR", "there"}}, "hello\n", 10);
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.output, "hello there\nerr");
  const ToolRun slow = run_tool({"/bin/sleep", "10"}, {}, "", 0.2);
  EXPECT_EQ(slow.status, -1);
  EXPECT_TRUE(contains(slow.output, "did not end within")) << slow.output;
}

TEST(FitGpuUnit, AProbesOutcomeNeedsCudasWordsToBeAnOom) {
  const int exit1 = 1 << 8, ok = 0;
  EXPECT_EQ(gpu_outcome_of(ok, false, ""), Outcome::completed);
  EXPECT_EQ(gpu_outcome_of(exit1, false, "CUDA out of memory"), Outcome::cuda_oom);
  EXPECT_EQ(gpu_outcome_of(exit1, false, ""), Outcome::failed);
  EXPECT_EQ(gpu_outcome_of(SIGKILL, true, ""), Outcome::too_slow);
  EXPECT_EQ(gpu_outcome_of(ok, false, "CUDA out of memory"), Outcome::completed) << "a job that recovered completed";
  Probe oom;
  oom.outcome = Outcome::cuda_oom;
  EXPECT_EQ(level_of(oom, 1.0), Level::does_not_run);
}

FitReport fabricated() {
  FitReport r;
  r.command = "python3 train.py";
  r.max_slowdown = 4;
  r.full_speed_margin = 0.1;
  r.cutoff_s = 8;
  r.reference_s = 2;
  r.gpu = GpuFit{0,      "GPU-abc",  "NVIDIA H100 80GB HBM3", 80 * 1024 * kMiB,
                 "nvml", 516 * kMiB, "CUDA MPS: bounds",      "dmem: no"};
  Baseline b;
  b.run.seconds = 2;
  b.run.gpu_peak = 3000 * kMiB;
  b.run.torch_allocated = 2048 * kMiB;
  b.run.torch_reserved = 2200 * kMiB;
  b.charge_peak = 3000 * kMiB;
  b.unreclaimable_peak = 516 * kMiB;
  r.baseline = b;
  Probe oom;
  oom.limit = 1000 * kMiB;
  oom.outcome = Outcome::cuda_oom;
  oom.seconds = 1;
  oom.exit_status = 1;
  oom.detail = "exit status 1: torch.OutOfMemoryError: CUDA out of memory\x1b[2J";
  Probe ok;
  ok.limit = 1600 * kMiB;
  ok.seconds = 2;
  ok.detail = "exit status 0";
  ok.gpu_peak = 3100 * kMiB;
  r.probes = {oom, ok};
  Finding found;
  found.limit = 1600 * kMiB;
  found.probe = 1;
  found.short_of = 1000 * kMiB;
  r.findings.runs = found;
  r.findings.full_speed = found;
  return r;
}

TEST(FitGpuUnit, TheReportsCarryTheDeviceAndTorchFigures) {
  const FitReport r = fabricated();
  const std::string text = text_report(r, 1000);  // wide: a sentence is on one line
  EXPECT_TRUE(contains(text, "GPU 0: NVIDIA H100 80GB HBM3 GPU-abc")) << text;
  EXPECT_TRUE(contains(text, "device MiB alloc MiB resvd MiB  how it ended")) << text;
  EXPECT_TRUE(contains(text, "\n  1600.0     completed   2.00    1.00x     3100.0 ")) << text;
  EXPECT_TRUE(contains(text, "CUDA OOM")) << text;
  EXPECT_FALSE(contains(text, "\x1b[2J")) << "the job's stderr never drives the terminal";
  EXPECT_TRUE(contains(text, "per process, smallest limit not OOM-killed: 1600.0 MiB")) << text;
  EXPECT_TRUE(contains(text, "the tree held 3100.0 MiB on the device")) << text;
  EXPECT_TRUE(contains(text, "device memory to ask for: 3100.0 MiB on GPU 0")) << text;
  EXPECT_TRUE(contains(text, "note: dmem: no")) << text;
  // In 80 columns the device's figure stays and the torch columns are named as left out; the
  // CUDA error line is cut, not the figures; the findings and the request fit.
  const std::string narrow = text_report(r, 80);
  EXPECT_TRUE(contains(narrow, "  limit MiB  outcome   time s slowdown device MiB  how it ended\n")) << narrow;
  EXPECT_TRUE(contains(narrow, "left out to fit 80 columns: alloc MiB, resvd MiB; \"how it ended\"")) << narrow;
  EXPECT_TRUE(contains(narrow, "  exit status 1: torch.OutOf...\n")) << narrow;
  std::istringstream lines(narrow);
  for (std::string line; std::getline(lines, line);) {
    const auto columns = std::count_if(line.begin(), line.end(), [](char c) { return (c & 0xC0) != 0x80; });
    EXPECT_LE(columns, 80) << line;  // code points: the cut ends in "…"
  }
  const nlohmann::json j = nlohmann::json::parse(json_report(r));
  EXPECT_EQ(j["gpu"]["uuid"], "GPU-abc");
  EXPECT_EQ(j["gpu"]["limit_per"], "process");
  EXPECT_EQ(j["baseline"]["torch_reserved_peak_bytes"].get<Bytes>(), 2200 * kMiB);
  EXPECT_EQ(j["probes"][0]["outcome"], "cuda_oom");
  EXPECT_TRUE(j["probes"][0]["gpu_peak_bytes"].is_null());
  EXPECT_EQ(j["probes"][1]["gpu_peak_bytes"].get<Bytes>(), 3100 * kMiB);
  const std::string csv = csv_report(r);
  EXPECT_TRUE(contains(csv, "detail,gpu_peak_bytes,torch_allocated_bytes,torch_reserved_bytes\n")) << csv;
  EXPECT_TRUE(contains(csv, "\nprobe,1,1677721600,completed,")) << csv;
  EXPECT_TRUE(contains(csv, ",3250585600,,\n")) << csv;
  // Every row has the header's columns.
  std::istringstream rows(csv);
  for (std::string row; std::getline(rows, row);) {
    std::size_t commas = 0;
    bool quoted = false;
    for (char c : row) {
      if (c == '"') quoted = !quoted;
      if (c == ',' && !quoted) ++commas;
    }
    EXPECT_EQ(commas, 12u) << row;
  }
  EXPECT_TRUE(json_report(FitReport{}).find("\"gpu\": null") != std::string::npos) << "host fit: no gpu object";
}

}  // namespace
}  // namespace qprof::fit
