// SPDX-License-Identifier: Apache-2.0
// qprof run's GPU backend starts beside the job: NVML (through the fake libnvidia-ml.so.1, made
// slow to start) opens on a thread of its own while the command launches, and the job never
// waits for it; its figures are whole all the same. The smi backends, which start helper
// processes, still open before the tree is primed: their helpers are never the tree's.
#include <gtest/gtest.h>

#include <time.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"
#include "unit/gpu_test_util.hpp"

namespace qprof::test {
using trace::GpuSample;
using trace::Trace;

namespace {

constexpr Bytes kMiB = Bytes{1} << 20;
constexpr long kInitDelayUs = 1'500'000;  // a slow driver's start, well above qprof's own

std::int64_t realtime_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// The job writes when it started (date +%s%N), then holds 1 GiB on the fake GPU for 3 s: past
// the backend's start, so that the peak is seen after it.
Result run_timed_job(const FakeNvmlScript& script, const std::string& gpu, const std::string& out,
                     const std::string& started) {
  const std::string job =
      "date +%s%N > '" + started + "'; exec '" + gpu_fake_job_bin() + "' '" + script.path() + "' 1024:3000 0:200";
  return run({"env", "QPROF_NVML_LIBRARY=" + fake_nvml(), "QPROF_FAKE_NVML_SCRIPT=" + script.path(), qprof_bin(), "run",
              "--gpu", gpu, "--gpu-interval", "0.02", "--cgroup", "off", "-o", out, "--", "sh", "-c", job});
}

TEST(RunGpuStart, TheJobStartsWhileNvmlStartsAndTheGpuFiguresAreWhole) {
  FakeNvmlScript script("driver 550.54.15\ninit_delay_us " + std::to_string(kInitDelayUs) +
                        "\ndevice GPU-1f2e3d4c-0000-1111-2222-333344445555 85899345920 1073741824 NVIDIA H100 80GB "
                        "HBM3\ncompute 1 1073741824\n");
  for (const char* gpu : {"auto", "nvml"}) {
    const std::string out = temp_dir() + "/start_" + gpu + ".dat", started = temp_dir() + "/started_" + gpu;
    const std::int64_t t0 = realtime_ns();
    const Result r = run_timed_job(script, gpu, out, started);
    ASSERT_EQ(r.status, 0) << r.err;
    const std::int64_t latency_ns = std::stoll(read_file(started)) - t0;
    // Waiting for the backend, the job would start 1.5 s after qprof; beside it, at once
    // (qprof's own start, on a loaded test machine, is well under a second).
    EXPECT_LT(latency_ns, kInitDelayUs * 1000 * 2 / 3) << gpu << ": the job started " << latency_ns / 1e6 << " ms in";
    EXPECT_NE(joined(r.err).find("qprof: GPU: NVML, driver 550.54.15"), std::string::npos) << r.err;
    const Trace t = trace::read_trace(out);
    ASSERT_EQ(t.gpu_devices.size(), 1u) << r.err;
    Bytes tree_peak = 0, used_peak = 0;
    for (const GpuSample& g : t.gpu) {
      tree_peak = std::max(tree_peak, g.tree);
      used_peak = std::max(used_peak, g.used);
    }
    EXPECT_EQ(tree_peak, 1024 * kMiB) << gpu << ": the job's step, exactly";
    EXPECT_EQ(used_peak, 2048 * kMiB) << gpu << ": the job's and the other tenant's";
    EXPECT_NE(joined(r.err).find("GPU peak        1.00 GiB"), std::string::npos) << r.err;
  }
}

// A command that ends before the backend is open does not wait for it under --gpu auto (the
// default): `run -- true` costs what it costs without a GPU. The trace says why it has no GPU
// figures; qprof leaves the opening thread behind and exits cleanly. Asked for by name (--gpu
// nvml), or with -v, the backend is waited for, so that what it found is said.
TEST(RunGpuStart, AShortRunDoesNotWaitForTheBackendUnlessNamedOrVerbose) {
  FakeNvmlScript script("driver 550.54.15\ninit_delay_us " + std::to_string(kInitDelayUs) +
                        "\ndevice GPU-1f2e3d4c-0000-1111-2222-333344445555 85899345920 1073741824 NVIDIA H100 80GB "
                        "HBM3\n");
  const std::vector<std::vector<std::string>> cases = {{"--gpu", "auto"}, {"--gpu", "nvml"}, {"--gpu", "auto", "-v"}};
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const std::string out = temp_dir() + "/short_" + std::to_string(c) + ".dat";
    std::vector<std::string> argv{"env", "QPROF_NVML_LIBRARY=" + fake_nvml(), "QPROF_FAKE_NVML_SCRIPT=" + script.path(),
                                  qprof_bin(), "run"};
    argv.insert(argv.end(), cases[c].begin(), cases[c].end());
    argv.insert(argv.end(), {"--cgroup", "off", "-o", out, "--", "true"});
    const std::int64_t t0 = realtime_ns();
    const Result r = run(argv);
    const double took_s = static_cast<double>(realtime_ns() - t0) / 1e9;
    ASSERT_EQ(r.status, 0) << r.err;
    const Trace t = trace::read_trace(out);
    const bool noted = std::any_of(t.notes.begin(), t.notes.end(), [](const std::string& n) {
      return n.find("GPU: the backend was still opening when the command ended") != std::string::npos;
    });
    if (c == 0) {
      EXPECT_LT(took_s, kInitDelayUs / 1e6 * 2 / 3) << "the backend's 1.5 s start was waited for";
      EXPECT_TRUE(noted) << read_file(out);
      EXPECT_EQ(joined(r.err).find("GPU: NVML"), std::string::npos) << r.err;
    } else {
      EXPECT_GE(took_s, kInitDelayUs / 1e6) << c << ": named or -v, the backend is waited for";
      EXPECT_FALSE(noted) << read_file(out);
      EXPECT_NE(joined(r.err).find("qprof: GPU: NVML, driver 550.54.15"), std::string::npos) << r.err;
    }
  }
}

// --gpu auto where NVML's library loads but finds no GPU: the backend opened beside the job
// tries no nvidia-smi (whose helpers would come after the tree was primed), and says so.
TEST(RunGpuStart, AutoBesideTheJobTriesNoSmiAndSaysSo) {
  FakeNvmlScript script("init 9\n");  // NVML_ERROR_DRIVER_NOT_LOADED
  const std::string out = temp_dir() + "/auto_no_driver.dat";
  const Result r =
      run({"env", "QPROF_NVML_LIBRARY=" + fake_nvml(), "QPROF_FAKE_NVML_SCRIPT=" + script.path(),
           "PATH=" + fake_scripts_dir() + ":/usr/bin:/bin", qprof_bin(), "run", "-v", "-o", out, "--", "true"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(joined(r.err).find("smi: not tried (NVML's library is here; --gpu smi tries it)"), std::string::npos)
      << r.err;
  EXPECT_TRUE(trace::read_trace(out).gpu.empty());
}

// The fake nvidia-smi's helpers (its -lms loops) and its one-off queries are qprof's children,
// never the tree's: with -M, no process of the trace is one of them.
TEST(RunGpuStart, SmiHelpersAreNeverInTheTree) {
  ScratchDir smi;
  write_atomically(smi.file("gpus"), "0, GPU-aaaa-bbbb, 81559, 1024, NVIDIA H100 80GB HBM3\n");
  write_atomically(smi.file("apps"), "");
  for (const char* gpu : {"smi", "auto"}) {
    const std::string out = temp_dir() + "/smi_" + std::string(gpu) + ".dat";
    const Result r =
        run({"env", "QPROF_FAKE_SMI_DIR=" + smi.path(), "QPROF_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1",
             "PATH=" + fake_scripts_dir() + ":/usr/bin:/bin", qprof_bin(), "run", "-M", "--gpu", gpu, "--cgroup", "off",
             "-o", out, "--", "sh", "-c", "sleep 0.3 & sleep 0.4; wait"});
    ASSERT_EQ(r.status, 0) << r.err;
    ASSERT_NE(joined(r.err).find("qprof: GPU: "), std::string::npos) << r.err;
    std::set<std::int64_t> helpers;
    std::istringstream calls(slurp(smi.file("calls")));
    for (std::string line; std::getline(calls, line);) helpers.insert(std::stoll(line));
    ASSERT_GE(helpers.size(), 3u) << "the device query and the two -lms loops";
    const Trace t = trace::read_trace(out);
    ASSERT_GE(t.children.size(), 2u) << "sh and its sleeps are the tree's";
    for (const trace::ChildSeries& c : t.children) EXPECT_EQ(helpers.count(c.pid), 0u) << gpu << ": " << c.pid;
    std::remove(smi.file("calls").c_str());
  }
}

}  // namespace
}  // namespace qprof::test
