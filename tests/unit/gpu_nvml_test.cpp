// SPDX-License-Identifier: Apache-2.0
// The NVML backend over the fake libnvidia-ml.so.1 (tests/fakes/fake_nvml.c), scripted per test.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <signal.h>

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "e2e/e2e_util.hpp"
#include "gpu_test_util.hpp"
#include "qprof/gpu/backend.hpp"

namespace qprof::gpu {
namespace {

using test::fake_nvml;
using test::fake_nvml_calls;
using test::FakeNvmlScript;
using Status = DeviceProcesses::Status;

constexpr Bytes MiB = Bytes{1} << 20;
constexpr Bytes GiB = Bytes{1} << 30;

Result<std::unique_ptr<Backend>> open_variant(const std::string& variant) {
  OpenOptions o;
  o.nvml_library = fake_nvml(variant);
  return open_nvml(o);
}

// The fake library's backend; nullptr where it does not open.
std::unique_ptr<Backend> open(const std::string& variant) {
  Result<std::unique_ptr<Backend>> opened = open_variant(variant);
  return opened ? std::move(*opened) : nullptr;
}

const char* kTwoGpus =
    "driver 550.54.15\n"
    "device GPU-11111111-2222-3333-4444-555555555555 85899345920 1073741824 NVIDIA H100 80GB HBM3\n"
    "device GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee 25769803776 536870912 NVIDIA RTX A5000\n";

std::vector<Bytes> used_of(Backend& b) {
  std::vector<Bytes> used(b.devices().size());
  b.device_used(used);
  return used;
}

std::vector<DeviceProcesses> processes_of(Backend& b, std::vector<pid_t> pids) {
  std::vector<DeviceProcesses> out(b.devices().size());
  b.process_usage(pids, out);
  return out;
}

// fit --gpu reads the compute and MIG modes: the driver's answers, per device.
TEST(GpuNvml, ModesAreTheDriversPerDevice) {
  FakeNvmlScript script(std::string(kTwoGpus) + "compute_mode 3\nmig_mode 1\n");
  auto b = open("full");
  ASSERT_TRUE(b);
  const DeviceModes first = b->modes(0), second = b->modes(1);
  EXPECT_EQ(first.compute, ComputeMode::default_mode);
  EXPECT_EQ(first.mig, false);
  EXPECT_EQ(second.compute, ComputeMode::exclusive_process);
  EXPECT_EQ(second.mig, true) << "MIG on, no MIG device made yet";
  EXPECT_EQ(b->modes(2).compute, std::nullopt) << "no such device";
}

TEST(GpuNvml, FindsDevicesByUuidWithNamesTotalsAndUse) {
  FakeNvmlScript script(kTwoGpus);
  auto b = open("full");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->name(), "nvml");
  ASSERT_EQ(b->devices().size(), 2u);
  EXPECT_EQ(b->devices()[0].uuid, "GPU-11111111-2222-3333-4444-555555555555");
  EXPECT_EQ(b->devices()[0].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(b->devices()[0].total, 85899345920u);
  EXPECT_EQ(b->devices()[0].vendor_index, 0);
  EXPECT_EQ(b->devices()[1].vendor_index, 1);
  EXPECT_TRUE(b->devices()[1].parent_uuid.empty());
  EXPECT_EQ(used_of(*b), (std::vector<Bytes>{GiB, GiB / 2}));
  // The _v2 call was used, with its real version word (the fake refuses any other).
  EXPECT_GT(fake_nvml_calls(fake_nvml(), "nvmlDeviceGetMemoryInfo_v2"), 0);
  EXPECT_EQ(fake_nvml_calls(fake_nvml(), "nvmlDeviceGetMemoryInfo"), 0);
  const std::string d = b->description();
  EXPECT_NE(d.find("driver 550.54.15"), std::string::npos) << d;
  EXPECT_NE(d.find("NVIDIA RTX A5000"), std::string::npos) << d;
  EXPECT_TRUE(b->lists_every_process());
  EXPECT_TRUE(b->cuda_devices());
}

TEST(GpuNvml, CountsTheTreeNotAForeignPidAndAPidOnBothListsOnce) {
  FakeNvmlScript script(std::string(kTwoGpus) +
                        "compute 100 104857600\n"    // the tree: 100 MiB compute…
                        "graphics 100 125829120\n"   // …and 120 MiB graphics: the same process, max
                        "compute 101 52428800\n"     // the tree: 50 MiB
                        "compute 999 536870912\n");  // a foreign PID: 512 MiB, not the tree's
  auto b = open("full");
  ASSERT_TRUE(b);
  const auto r = processes_of(*b, {100, 101, 4242});  // the script's processes are on its last GPU
  EXPECT_EQ(r[1].status, Status::ok);
  EXPECT_EQ(r[1].tree, 170 * MiB);
  EXPECT_EQ(r[1].listed, 3u);
  EXPECT_EQ(r[1].matched, 2u);
  EXPECT_EQ(r[1].unknown, 0u);
  EXPECT_EQ(r[0].status, Status::ok);
  EXPECT_EQ(r[0].tree, 0u);
  EXPECT_EQ(r[0].listed, 0u);
  EXPECT_GT(fake_nvml_calls(fake_nvml(), "nvmlDeviceGetComputeRunningProcesses_v3"), 0);
  EXPECT_GT(fake_nvml_calls(fake_nvml(), "nvmlDeviceGetGraphicsRunningProcesses_v3"), 0);
}

TEST(GpuNvml, UllongMaxIsNotAvailableNotEighteenExabytes) {
  FakeNvmlScript script(std::string(kTwoGpus) + "compute 100 max\ncompute 101 1048576\n");
  auto b = open("full");
  ASSERT_TRUE(b);
  const auto r = processes_of(*b, {100, 101});
  EXPECT_EQ(r[1].status, Status::ok);
  EXPECT_EQ(r[1].tree, MiB);
  EXPECT_EQ(r[1].matched, 2u);
  EXPECT_EQ(r[1].unknown, 1u);
}

TEST(GpuNvml, NoPermissionMakesTheListsUnavailableWithAWarning) {
  FakeNvmlScript script(std::string(kTwoGpus) + "process_error 4\n");  // on the second GPU
  auto b = open("full");
  ASSERT_TRUE(b);
  const auto r = processes_of(*b, {100});
  EXPECT_EQ(r[0].status, Status::ok);
  EXPECT_EQ(r[1].status, Status::unavailable);
  std::vector<std::string> w;
  b->take_warnings(w);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("Insufficient Permissions"), std::string::npos) << w[0];
  processes_of(*b, {100});
  w.clear();
  b->take_warnings(w);
  EXPECT_TRUE(w.empty()) << "said once";
}

TEST(GpuNvml, InitFailureIsReportedWithNvmlsWords) {
  FakeNvmlScript script("init 9\n");
  const auto opened = open_variant("full");
  ASSERT_FALSE(opened.ok());
  const std::string& why = opened.failure().message;
  EXPECT_NE(why.find("nvmlInit_v2"), std::string::npos) << why;
  EXPECT_NE(why.find("Driver Not Loaded (9)"), std::string::npos) << why;
}

TEST(GpuNvml, NoDeviceIsNotABackend) {
  FakeNvmlScript script("driver 1.0\n");
  const auto opened = open_variant("full");
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.failure().message.find("no GPU"), std::string::npos) << opened.failure().message;
}

TEST(GpuNvml, MissingLibraryIsReported) {
  OpenOptions o;
  o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  const auto opened = open_nvml(o);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.failure().message.find("cannot load /nonexistent/libnvidia-ml.so.1"), std::string::npos)
      << opened.failure().message;
}

TEST(GpuNvml, WithoutV3FallsBackToV2) {
  FakeNvmlScript script(std::string(kTwoGpus) + "compute 100 104857600\ngraphics 100 1048576\n");
  auto b = open("no_v3");
  ASSERT_TRUE(b);
  const auto r = processes_of(*b, {100});
  EXPECT_EQ(r[1].tree, 100 * MiB);
  EXPECT_GT(fake_nvml_calls(fake_nvml("no_v3"), "nvmlDeviceGetComputeRunningProcesses_v2"), 0);
  EXPECT_EQ(fake_nvml_calls(fake_nvml("no_v3"), "nvmlDeviceGetComputeRunningProcesses_v3"), 0);
}

TEST(GpuNvml, WithoutV2AndV3ReadsSixteenByteEntries) {
  FakeNvmlScript script(std::string(kTwoGpus) + "compute 100 104857600\ncompute 101 2097152\ncompute 7 max\n");
  auto b = open("no_v2");
  ASSERT_TRUE(b);
  const auto r = processes_of(*b, {100, 101});
  EXPECT_EQ(r[1].status, Status::ok);
  EXPECT_EQ(r[1].tree, 102 * MiB);
  EXPECT_EQ(r[1].listed, 3u);
  EXPECT_EQ(r[1].matched, 2u);
  EXPECT_GT(fake_nvml_calls(fake_nvml("no_v2"), "nvmlDeviceGetComputeRunningProcesses"), 0);
}

TEST(GpuNvml, WithoutMemoryInfoV2UsesTheFirstVersion) {
  FakeNvmlScript script(kTwoGpus);
  auto b = open("no_mem_v2");
  ASSERT_TRUE(b);
  EXPECT_EQ(used_of(*b), (std::vector<Bytes>{GiB, GiB / 2}));
  EXPECT_EQ(b->devices()[0].total, 85899345920u);
  EXPECT_GT(fake_nvml_calls(fake_nvml("no_mem_v2"), "nvmlDeviceGetMemoryInfo"), 0);
}

TEST(GpuNvml, AnOldDriverWithoutInitV2Works) {
  FakeNvmlScript script(std::string(kTwoGpus) + "compute 100 1048576\n");
  auto b = open("old_init");
  ASSERT_TRUE(b);
  EXPECT_EQ(processes_of(*b, {100})[1].tree, MiB);
  EXPECT_EQ(fake_nvml_calls(fake_nvml("old_init"), "nvmlInit"), 1);
  EXPECT_GT(fake_nvml_calls(fake_nvml("old_init"), "nvmlDeviceGetCount"), 0);
  EXPECT_GT(fake_nvml_calls(fake_nvml("old_init"), "nvmlDeviceGetComputeRunningProcesses_v2"), 0);
}

TEST(GpuNvml, GrowsItsBufferOnInsufficientSize) {
  std::string s = kTwoGpus;
  for (int pid = 1000; pid < 1200; ++pid) s += "compute " + std::to_string(pid) + " 1048576\n";
  FakeNvmlScript script(s);
  auto b = open("full");
  ASSERT_TRUE(b);
  const long before = fake_nvml_calls(fake_nvml(), "nvmlDeviceGetComputeRunningProcesses_v3");
  std::vector<pid_t> tree;
  for (int pid = 1000; pid < 1200; pid += 2) tree.push_back(pid);
  const auto r = processes_of(*b, tree);
  EXPECT_EQ(r[1].listed, 200u);
  EXPECT_EQ(r[1].matched, 100u);
  EXPECT_EQ(r[1].tree, 100 * MiB);
  const long calls = fake_nvml_calls(fake_nvml(), "nvmlDeviceGetComputeRunningProcesses_v3") - before;
  EXPECT_EQ(calls, 3) << "device 0: one call; device 1: too small, then large enough";
  // The grown buffer stays: one call per device from now on.
  processes_of(*b, tree);
  EXPECT_EQ(fake_nvml_calls(fake_nvml(), "nvmlDeviceGetComputeRunningProcesses_v3") - before, 5);
}

TEST(GpuNvml, DetectsThirtyTwoByteEntriesOfEarlyR535Drivers) {
  for (int n : {1, 3, 7}) {
    std::string s = std::string(kTwoGpus) + "stride32 1\n";
    for (int i = 0; i < n; ++i) s += "compute " + std::to_string(300 + i) + " " + std::to_string((i + 1) * MiB) + "\n";
    FakeNvmlScript script(s);
    auto b = open("full");
    ASSERT_TRUE(b);
    std::vector<pid_t> tree;
    Bytes expect = 0;
    for (int i = 0; i < n; ++i) {
      tree.push_back(300 + i);
      expect += (i + 1) * MiB;
    }
    const auto r = processes_of(*b, tree);
    EXPECT_EQ(r[1].status, Status::ok) << n;
    EXPECT_EQ(r[1].listed, static_cast<unsigned>(n));
    EXPECT_EQ(r[1].tree, expect) << n;
    std::vector<std::string> w;
    b->take_warnings(w);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_NE(w[0].find("32-byte"), std::string::npos);
  }
}

TEST(GpuNvml, MigDevicesReplaceTheirParentAndHaveTheirOwnProcesses) {
  FakeNvmlScript script(
      "device GPU-a100aaaa-0000-0000-0000-000000000000 42949672960 0 NVIDIA A100-SXM4-40GB\n"
      "mig MIG-11110000-0000-0000-0000-000000000000 10200547328 2147483648 NVIDIA A100-SXM4-40GB MIG 2g.10gb\n"
      "compute 100 1073741824\n"
      "mig MIG-22220000-0000-0000-0000-000000000000 10200547328 3221225472 NVIDIA A100-SXM4-40GB MIG 2g.10gb\n"
      "compute 555 3221225472\n"
      "device GPU-bbbb0000-0000-0000-0000-000000000000 42949672960 0 NVIDIA A100-SXM4-40GB\n");
  auto b = open("full");
  ASSERT_TRUE(b);
  ASSERT_EQ(b->devices().size(), 3u);
  EXPECT_EQ(b->devices()[0].uuid, "MIG-11110000-0000-0000-0000-000000000000");
  EXPECT_EQ(b->devices()[0].parent_uuid, "GPU-a100aaaa-0000-0000-0000-000000000000");
  EXPECT_EQ(b->devices()[0].vendor_index, 0);
  EXPECT_EQ(b->devices()[0].total, 10200547328u);
  EXPECT_EQ(b->devices()[1].uuid, "MIG-22220000-0000-0000-0000-000000000000");
  EXPECT_EQ(b->devices()[2].uuid, "GPU-bbbb0000-0000-0000-0000-000000000000");
  EXPECT_EQ(b->devices()[2].vendor_index, 1);
  EXPECT_EQ(used_of(*b), (std::vector<Bytes>{2 * GiB, 3 * GiB, 0}));
  const auto r = processes_of(*b, {100});
  EXPECT_EQ(r[0].tree, GiB);
  EXPECT_EQ(r[1].tree, 0u);
  EXPECT_EQ(r[1].listed, 1u);
}

TEST(GpuNvml, FollowsMemoryThatChangesOverTime) {
  FakeNvmlScript script(kTwoGpus);
  auto b = open("full");
  ASSERT_TRUE(b);
  EXPECT_EQ(processes_of(*b, {100})[1].tree, 0u);
  std::string busy = kTwoGpus;
  busy.replace(busy.find(" 536870912 "), 11, " 5368709120 ");
  script.set(busy + "compute 100 4294967296\n");
  EXPECT_EQ(used_of(*b)[1], 5 * GiB);
  EXPECT_EQ(processes_of(*b, {100})[1].tree, 4 * GiB);
  script.set(kTwoGpus);
  EXPECT_EQ(processes_of(*b, {100})[1].tree, 0u);
  EXPECT_EQ(used_of(*b)[1], GiB / 2);
  EXPECT_EQ(used_of(*b)[0], GiB);
}

TEST(GpuNvml, ShutsNvmlDownWhenClosed) {
  FakeNvmlScript script(kTwoGpus);
  test::ScratchDir dir;
  ::setenv("QPROF_FAKE_NVML_COUNTS", dir.file("counts").c_str(), 1);
  open("full").reset();
  ::unsetenv("QPROF_FAKE_NVML_COUNTS");
  const std::string counts = test::slurp(dir.file("counts"));
  EXPECT_NE(counts.find("nvmlInit_v2 1\n"), std::string::npos) << counts;
  EXPECT_NE(counts.find("nvmlShutdown 1\n"), std::string::npos) << counts;
}

TEST(GpuNvml, QprofNvmlLibraryChoosesTheLibrary) {
  FakeNvmlScript script(kTwoGpus);
  ::setenv("QPROF_NVML_LIBRARY", fake_nvml("no_v3").c_str(), 1);
  auto opened = open_nvml(OpenOptions{});
  ::unsetenv("QPROF_NVML_LIBRARY");
  ASSERT_TRUE(opened.ok()) << opened.failure().message;
  auto b = std::move(*opened);
  EXPECT_NE(b->description().find("nvml-no_v3/libnvidia-ml.so.1"), std::string::npos) << b->description();
}

// LD_LIBRARY_PATH is read by the loader when a program starts: another process shows it.
TEST(GpuNvml, TheLoadersSearchFindsItThroughLdLibraryPath) {
  FakeNvmlScript script(std::string(kTwoGpus) + "compute 4321 2097152\n");
  const std::string cmd = "env -u QPROF_NVML_LIBRARY LD_LIBRARY_PATH=" + test::fake_nvml_dir("full") + " " +
                          test::gpu_probe_bin() + " nvml 4321";
  const auto r = test::run({"/bin/sh", "-c", cmd});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("GPU: NVML, driver 550.54.15 (libnvidia-ml.so.1)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("device 0 GPU-11111111-2222-3333-4444-555555555555 85899345920 NVIDIA H100 80GB HBM3"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("tree 1 2097152 listed=1 matched=1"), std::string::npos) << r.out;
}

// The workload the end-to-end tests run under qprof: it puts its own PID in the fake's script.
TEST(GpuNvml, TheFakeJobWorkloadHoldsWhatItSays) {
  FakeNvmlScript script(kTwoGpus);
  auto b = open("full");
  ASSERT_TRUE(b);
  test::Process job({test::gpu_fake_job_bin(), script.path(), "0:100", "300:400", "0:100"});
  Bytes peak = 0, used_peak = 0;
  unsigned matched = 0;
  for (int i = 0; i < 2000 && ::kill(job.pid(), 0) == 0; ++i) {
    const auto r = processes_of(*b, {job.pid()});
    peak = std::max(peak, r[1].tree);
    matched = std::max(matched, r[1].matched);
    used_peak = std::max(used_peak, used_of(*b)[1]);
    if (peak > 0 && r[1].tree == 0) break;  // held, then given back
    usleep(5000);
  }
  const auto result = job.wait(30);
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_EQ(peak, 300 * MiB);
  EXPECT_EQ(matched, 1u);
  EXPECT_EQ(used_peak, GiB / 2 + 300 * MiB) << "the device's use rises with it";
  EXPECT_NE(result.err.find("QPROF_MARK: GPU 300 MiB"), std::string::npos) << result.err;
  EXPECT_EQ(test::slurp(script.path()), kTwoGpus) << "the script is put back";
}

TEST(GpuNvml, NoLibraryAnywhereIsANormalCase) {
  const auto r = test::run(
      {"/bin/sh", "-c",
       "env -u QPROF_NVML_LIBRARY LD_LIBRARY_PATH=/nonexistent PATH=/nonexistent " + test::gpu_probe_bin() + " auto"});
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_EQ(r.out.rfind("GPU: none found (nvml: cannot load libnvidia-ml.so.1", 0), 0u) << r.out;
}

}  // namespace
}  // namespace qprof::gpu
