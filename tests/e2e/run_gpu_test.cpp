// SPDX-License-Identifier: Apache-2.0
// qprof run with GPU memory, through the fake libnvidia-ml.so.1 (tests/fakes) and a job that
// tells the fake what it holds (tests/workloads/gpu_fake_job.c).
#include <gtest/gtest.h>

#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "e2e_util.hpp"
#include "qprof/trace/format.hpp"
#include "unit/gpu_test_util.hpp"

namespace qprof::test {
using trace::GpuSample;
using trace::GpuUtilSample;
using trace::Marker;
using trace::Trace;

namespace {

constexpr Bytes kMiB = Bytes{1} << 20;

// One H100 with 1 GiB in use by another tenant: PID 1, which is never part of the tree.
const char* kScript =
    "driver 550.54.15\n"
    "device GPU-1f2e3d4c-0000-1111-2222-333344445555 85899345920 1073741824 NVIDIA H100 80GB HBM3\n"
    "compute 1 1073741824\n";

Result qprof_with_fake(const FakeNvmlScript& script, const std::vector<std::string>& args) {
  std::vector<std::string> argv{"env", "QPROF_NVML_LIBRARY=" + fake_nvml(), "QPROF_FAKE_NVML_SCRIPT=" + script.path(),
                                qprof_bin()};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

TEST(RunGpu, TheTreesGpuPeakIsItsOwnMemoryNotTheDevicesOtherTenants) {
  FakeNvmlScript script(kScript);
  const std::string out = temp_dir() + "/gpu.dat";
  const Result r = qprof_with_fake(script, {"run", "--gpu", "nvml", "--gpu-interval", "0.02", "-o", out, "--",
                                            gpu_fake_job_bin(), script.path(), "1024:400", "2048:400", "0:200"});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(joined(r.err).find("qprof: GPU: NVML, driver 550.54.15"), std::string::npos) << r.err;
  EXPECT_EQ(joined(r.err).find("PID namespace"), std::string::npos)
      << "a job that lists its own PIDs is not in a container";
  const Trace t = trace::read_trace(out);
  ASSERT_EQ(t.gpu_devices.size(), 1u);
  EXPECT_EQ(t.gpu_devices[0].uuid, "GPU-1f2e3d4c-0000-1111-2222-333344445555");
  EXPECT_EQ(t.gpu_devices[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(t.gpu_devices[0].total, 85899345920u);
  Bytes tree_peak = 0, used_peak = 0;
  for (const GpuSample& g : t.gpu) {
    tree_peak = std::max(tree_peak, g.tree);
    used_peak = std::max(used_peak, g.used);
  }
  EXPECT_EQ(tree_peak, 2048 * kMiB) << "exactly the job's largest step; the other tenant's 1 GiB is not the tree's";
  EXPECT_EQ(used_peak, 2048 * kMiB + 1024 * kMiB);
  // Checkpoints carry the GPU figure of their moment.
  std::map<std::string, Bytes> at;
  for (const Marker& m : t.markers) at[m.label] = m.at.gpu_tree.value_or(~Bytes{0});
  ASSERT_TRUE(at.count("GPU 2048 MiB")) << r.err;
  EXPECT_EQ(at["GPU 2048 MiB"], 2048 * kMiB);
  EXPECT_EQ(at["GPU 0 MiB"], 0u);
  EXPECT_NE(joined(r.err).find("GPU peak        2.00 GiB"), std::string::npos) << r.err;
  EXPECT_NE(joined(r.err).find("NVIDIA H100 80GB HBM3"), std::string::npos);
}

// The GPU is queried for each checkpoint: with per-process queries 5 s apart otherwise, a
// checkpoint's figure is of its own moment (age 0) and the step's exact size; the YAML says the
// age. A driver whose process list takes 300 ms cannot answer within the checkpoint's 100 ms:
// the figure is an older query's, and its age says so.
TEST(RunGpu, CheckpointsQueryTheGpuForTheirMoment) {
  // NVML opens beside the job, here in 50 ms: the first marker comes before, and its checkpoint
  // waits for it as it would for a query.
  FakeNvmlScript script(std::string(kScript) + "init_delay_us 50000\n");
  const std::string out = temp_dir() + "/gpu_cp.dat";
  const std::string yaml = temp_dir() + "/gpu_cp.yaml";
  const Result r =
      qprof_with_fake(script, {"run", "-q", "--gpu", "nvml", "--gpu-interval", "5", "-o", out, "--yaml", yaml, "--",
                               gpu_fake_job_bin(), script.path(), "512:300", "1536:300", "0:200"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_EQ(t.markers.size(), 3u) << r.err;
  const YAML::Node cps = YAML::LoadFile(yaml)["qprof"]["checkpoints"];
  ASSERT_EQ(cps.size(), t.markers.size() + 2);  // Start, the markers, End
  const Bytes steps[] = {512 * kMiB, 1536 * kMiB, 0};
  for (std::size_t i = 0; i < t.markers.size(); ++i) {
    const Marker& m = t.markers[i];
    ASSERT_TRUE(m.at.gpu_tree && m.at.gpu_age) << m.label;
    EXPECT_EQ(*m.at.gpu_tree, steps[i]) << m.label;
    EXPECT_DOUBLE_EQ(*m.at.gpu_age, 0.0) << m.label;
    ASSERT_TRUE(cps[i + 1]["gpu_age_s"]) << m.label;
    EXPECT_EQ(cps[i + 1]["gpu_age_s"].as<double>(), 0.0) << m.label;
  }
}

TEST(RunGpu, ACheckpointWhoseQueryTimedOutSaysHowOldItsFigureIs) {
  FakeNvmlScript script(std::string(kScript) + "delay_us 60000\n");
  const std::string out = temp_dir() + "/gpu_slow.dat";
  const std::string yaml = temp_dir() + "/gpu_slow.yaml";
  const Result r =
      qprof_with_fake(script, {"run", "-q", "--gpu", "nvml", "--gpu-interval", "0.02", "-o", out, "--yaml", yaml, "--",
                               gpu_fake_job_bin(), script.path(), "0:400", "512:500", "1536:500"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_EQ(t.markers.size(), 3u) << r.err;
  const YAML::Node cps = YAML::LoadFile(yaml)["qprof"]["checkpoints"];
  Seconds oldest = 0;
  for (std::size_t i = 0; i < t.markers.size(); ++i) {
    const Marker& m = t.markers[i];
    ASSERT_TRUE(m.at.gpu_age) << m.label;
    EXPECT_LT(*m.at.gpu_age, 5.0) << m.label;
    EXPECT_NEAR(cps[i + 1]["gpu_age_s"].as<double>(), *m.at.gpu_age, 1e-3) << m.label;
    oldest = std::max(oldest, *m.at.gpu_age);
  }
  // A query takes 120 ms or more (two list calls of 60 ms at least), the checkpoint waits 100 ms
  // at most, and the slow queries stretch the regular schedule: the later checkpoints carry a
  // figure asked at an earlier one, 400 ms or more before.
  EXPECT_GE(oldest, 0.3);
}

// GPU busy time end to end: the driver's utilisation rates become GPUUTIL lines, the device's
// mean is in the summary, and the stage table's bottleneck figures read them.
TEST(RunGpu, BusyTimeIsRecordedAndSummed) {
  FakeNvmlScript script(std::string(kScript) + "util 73 41\npcie 2048 1024\n");
  const std::string out = temp_dir() + "/gpu_util.dat";
  const Result r = qprof_with_fake(script, {"run", "-v", "--gpu", "nvml", "--gpu-interval", "0.02", "-o", out, "--",
                                            gpu_fake_job_bin(), script.path(), "1024:1500"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_GE(t.gpu_util.size(), 3u) << r.err;
  for (const GpuUtilSample& u : t.gpu_util) {
    EXPECT_EQ(u.device, t.gpu_devices.at(0).index);
    EXPECT_DOUBLE_EQ(u.busy_percent, 73.0);
    EXPECT_DOUBLE_EQ(u.mem_bw_percent, 41.0);
  }
  // PCIe comes on a schedule of its own (NVML samples it over 20 ms), from a second in: at least
  // once in this 1.5 s job, in bytes/s.
  const auto pcie = std::find_if(t.gpu_util.begin(), t.gpu_util.end(),
                                 [](const GpuUtilSample& u) { return u.pcie_rx_bytes_per_s.has_value(); });
  ASSERT_NE(pcie, t.gpu_util.end());
  EXPECT_DOUBLE_EQ(*pcie->pcie_rx_bytes_per_s, 2048.0 * 1024);
  EXPECT_DOUBLE_EQ(*pcie->pcie_tx_bytes_per_s, 1024.0 * 1024);
  EXPECT_NE(unwrapped(r.err).find(", busy 73 % on average"), std::string::npos) << r.err;
}

TEST(RunGpu, NoneMeansNoGpuLinesAndNoQueries) {
  FakeNvmlScript script(kScript);
  const std::string out = temp_dir() + "/gpu_none.dat";
  const Result r =
      qprof_with_fake(script, {"run", "--gpu", "none", "-o", out, "--", gpu_fake_job_bin(), script.path(), "512:200"});
  ASSERT_EQ(r.status, 0) << r.err;
  const Trace t = trace::read_trace(out);
  EXPECT_TRUE(t.gpu_devices.empty());
  EXPECT_TRUE(t.gpu.empty());
  EXPECT_EQ(joined(r.err).find("GPU peak"), std::string::npos);
}

TEST(RunGpu, AnAskedForBackendThatIsMissingIsSaidAndTheRunGoesOn) {
  const std::string out = temp_dir() + "/gpu_missing.dat";
  const Result r = run({"env", "QPROF_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1", qprof_bin(), "run", "--gpu", "nvml",
                        "-o", out, "--", "true"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(joined(r.err).find("nvml"), std::string::npos) << r.err;
  const Trace t = trace::read_trace(out);
  EXPECT_TRUE(t.gpu.empty());
  ASSERT_FALSE(t.notes.empty()) << "the failed request is kept in the trace";
}

TEST(RunGpu, AutoWithoutAnyGpuIsANormalRun) {
  const std::string out = temp_dir() + "/gpu_auto.dat";
  const Result r = run({"env", "QPROF_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1", "PATH=/usr/bin:/bin", qprof_bin(),
                        "run", "-o", out, "--", "true"});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(joined(r.err).find("GPU"), std::string::npos) << "no GPU is not a problem: nothing said\n" << r.err;
  const Trace t = trace::read_trace(out);
  ASSERT_EQ(t.notes.size(), 1u);
  EXPECT_TRUE(t.notes[0].starts_with("GPU: none found (nvml: ")) << t.notes[0];
  const Result v = run({"env", "QPROF_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1", "PATH=/usr/bin:/bin", qprof_bin(),
                        "run", "-v", "-o", out, "--", "true"});
  EXPECT_EQ(v.status, 0) << v.err;
  EXPECT_NE(joined(v.err).find("qprof: GPU: none found (nvml: "), std::string::npos) << "-v says why\n" << v.err;
}

}  // namespace
}  // namespace qprof::test
