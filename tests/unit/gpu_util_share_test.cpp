// SPDX-License-Identifier: Apache-2.0
// GPU busy time, the tree's share: asked only of the devices the tree shares, refused or absent
// answers, the window after a time alone, the driver's clock, and amdgpu's gpu_busy_percent
// through a fake sysfs tree (gpu_util_test.cpp has the rates, the windows and GPUUTIL lines).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "e2e/e2e_util.hpp"
#include "gpu_test_util.hpp"
#include "qprof/gpu/backend.hpp"
#include "qprof/gpu/sampler.hpp"
#include "qprof/trace/format.hpp"
#include "gpu_util_fixtures.hpp"

namespace qprof::gpu {
using trace::GpuUtilSample;
using trace::Trace;
using trace::TraceMeta;

namespace {

using namespace util_fixtures;  // NOLINT: the fixtures are this file's vocabulary
using test::FakeNvmlScript;
using test::ScratchDir;

// On a node of several GPUs, the tree's share is asked only of the devices it shares: the call
// costs milliseconds a device on a real driver (bench/nvml_probe.py).
TEST(GpuUtil, TheTreesShareIsAskedOnlyOfDevicesItShares) {
  FakeNvmlScript script(
      "device GPU-11111111-2222-3333-4444-555555555555 85899345920 1073741824 NVIDIA H100\n"
      "util 90 10\ncompute 100 268435456\ncompute 998 1048576\nprocess_util 100 90\n"  // shared
      "device GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee 85899345920 1073741824 NVIDIA H100\n"
      "util 50 5\ncompute 999 268435456\nprocess_util 999 50\n");  // another tenant's GPU
  SampledTrace q("util.dat");
  const std::vector<pid_t> tree{100};
  long before = process_util_calls();
  q.query(tree);
  EXPECT_EQ(process_util_calls() - before, 2) << "the first query asks the second GPU once: does it give the share?";
  before = process_util_calls();
  for (int k = 0; k < 3; ++k) q.query(tree);
  EXPECT_EQ(process_util_calls() - before, 3) << "then the first GPU only (no sample period learnt: at each query)";
  const Trace t = q.finish();
  ASSERT_EQ(t.gpu_util.size(), 8u);
  for (const GpuUtilSample& g : t.gpu_util) {
    ASSERT_TRUE(g.tree_busy_percent);
    EXPECT_DOUBLE_EQ(*g.tree_busy_percent, g.device == 0 ? 90 : 0) << "device " << g.device;
  }
}

// A driver that refuses the share (a product without it, a container without the right) gives
// no figure anywhere: not 0 where the tree has no process, then none where it has.
TEST(GpuUtil, ADriverThatRefusesTheShareGivesNoFigureEvenWhereTheTreeIsAbsent) {
  for (const int refusal : {3, 4}) {  // Not Supported, No Permission
    const std::string gpu =
        "device GPU-11111111-2222-3333-4444-555555555555 85899345920 1073741824 NVIDIA H100\n"
        "util 90 10\ncompute 999 268435456\nprocess_util_error " +
        std::to_string(refusal) + "\n";
    FakeNvmlScript script(gpu);
    SampledTrace q("refused.dat");
    const std::vector<pid_t> tree{100};
    const long before = process_util_calls();
    for (int k = 0; k < 3; ++k) q.query(tree);  // absent
    script.set(gpu + "compute 100 1048576\n");
    for (int k = 0; k < 2; ++k) q.query(tree);  // shared
    EXPECT_EQ(process_util_calls() - before, 1) << refusal << ": asked once, then known refused";
    const Trace t = q.finish();
    ASSERT_EQ(t.gpu_util.size(), 5u);
    for (const GpuUtilSample& g : t.gpu_util) EXPECT_FALSE(g.tree_busy_percent) << refusal << " at " << g.t;
  }
}

// Where the tree is a device's only tenant, the device's busy % is the tree's: the per-process
// call (milliseconds of CPU on a real driver) is made once, to learn that the driver gives the
// share at all, and not again until another process comes.
TEST(GpuUtil, TheTreeAloneOnADeviceHasItsBusyPercentWithoutThePerProcessCall) {
  const std::string gpu =
      "device GPU-11111111-2222-3333-4444-555555555555 85899345920 1073741824 NVIDIA H100\n"
      "util 64 20\ncompute 100 268435456\ngraphics 100 0\nprocess_util 100 90\n";
  FakeNvmlScript script(gpu);
  SampledTrace q("alone.dat");
  const std::vector<pid_t> tree{100};
  const long before = process_util_calls();
  for (int k = 0; k < 4; ++k) q.query(tree);
  EXPECT_EQ(process_util_calls() - before, 1) << "one call, whose answer (90) is not the device's figure";
  // Another tenant: the tree's own figure from its processes' samples, asked of the driver.
  script.set(gpu + "compute 999 1048576\nprocess_util 999 30\n");
  q.query(tree);
  EXPECT_EQ(process_util_calls() - before, 2);
  const Trace t = q.finish();
  ASSERT_EQ(t.gpu_util.size(), 5u);
  for (std::size_t k = 0; k < t.gpu_util.size(); ++k) {
    ASSERT_TRUE(t.gpu_util[k].tree_busy_percent) << k;
    EXPECT_DOUBLE_EQ(*t.gpu_util[k].tree_busy_percent, k < 4 ? 64 : 90) << "line " << k;
  }
}

// Every tenant is known only when both process lists were read, or the graphics list does not
// exist (Not Supported: a compute-only GPU). One that failed, or was refused to us, may hold
// another process: the tree's share is then asked of the driver.
TEST(GpuUtil, OnlyAGraphicsListReadOrNotSupportedLetsTheTreeBeKnownAlone) {
  for (const auto& [error, share] : {std::pair{999, 90.0}, std::pair{4, 90.0}, std::pair{3, 64.0}}) {
    FakeNvmlScript script(
        "device GPU-11111111-2222-3333-4444-555555555555 85899345920 1073741824 NVIDIA H100\n"
        "util 64 20\ncompute 100 268435456\ngraphics_error " +
        std::to_string(error) + "\nprocess_util 100 90\n");
    SampledTrace q("unknown.dat");
    const std::vector<pid_t> tree{100};
    for (int k = 0; k < 3; ++k) q.query(tree);
    const Trace t = q.finish();
    ASSERT_EQ(t.gpu_util.size(), 3u);
    for (const GpuUtilSample& g : t.gpu_util) {
      ASSERT_TRUE(g.tree_busy_percent) << error;
      EXPECT_DOUBLE_EQ(*g.tree_busy_percent, share) << "graphics list error " << error;
    }
  }
}

// Alone, the tree's share is the device's; when a tenant comes, the driver is asked for the
// periods of the last second, not for all since its one answer at the start.
TEST(GpuUtil, AfterATimeAloneTheWindowStartsASecondBack) {
  const std::string gpu =
      "device GPU-11111111-2222-3333-4444-555555555555 85899345920 1073741824 NVIDIA H100\n"
      "util 64 20\ncompute 100 268435456\n";
  FakeNvmlScript script(gpu + "process_util 100 40\n");
  SampledTrace q("window.dat");
  const std::vector<pid_t> tree{100};
  for (int k = 0; k < 3; ++k) q.query(tree);  // one call: its answer is the sample of now
  usleep(2'000'000);
  // A tenant, and the tree's samples since: 90 of 1.5 s ago (after the one answer, out of the
  // last second however late this query runs by up to half a second), 20 of now.
  script.set(gpu + "compute 999 1048576\nprocess_util 100 90 1500\nprocess_util 100 20 0\nprocess_util 999 50 0\n");
  q.query(tree);
  const Trace t = q.finish();
  ASSERT_EQ(t.gpu_util.size(), 4u);
  ASSERT_TRUE(t.gpu_util[3].tree_busy_percent);
  EXPECT_DOUBLE_EQ(*t.gpu_util[3].tree_busy_percent, 20) << "not (90 + 20) / 2 = 55: the time alone is not asked again";
}

// While the tree has no process on a device, the driver's samples there are other tenants':
// when the tree comes back, its share counts the periods since, not those it was away.
TEST(GpuUtil, TheTreesShareCountsNoPeriodOfItsAbsence) {
  OneGpu g("process_util 100 90\n", 0);
  auto& [script, b, u] = g;
  ASSERT_TRUE(b);
  const std::vector<pid_t> tree{100};
  ASSERT_TRUE(b->device_util(tree, u));
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 90);
  usleep(1'000'000);
  u[0].tenancy = DeviceUtil::Tenancy::absent;  // the tree's process left the device: seen at this query
  ASSERT_TRUE(b->device_util(tree, u));
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 0);
  usleep(100'000);
  // Back: a tenant's sample of 0.9 s ago (after the tree's last answer, before the query that saw
  // it away, however late this runs on a loaded machine), and the tree's of now.
  g.set("process_util 999 10 900\nprocess_util 100 60 0\n", 0);
  u[0].tenancy = DeviceUtil::Tenancy::shared;
  ASSERT_TRUE(b->device_util(tree, u));
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 60) << "the window starts where it came back: not ceil(60 / 2 periods) = 30";
}

// Clocks set or drifting apart: the driver's clock is told from the lags of the latest answers
// only, so that the schedule of calls follows it, and an answer lapses on the monotonic clock,
// so that a lag that changed never makes new answers look old.
TEST(GpuUtil, TheDriversClockIsFollowedWhenItFallsBack) {
  OneGpu g("process_util 100 70\n", -2.0);  // the driver's clock 2 s ahead of ours
  auto& [script, b, u] = g;
  ASSERT_TRUE(b);
  const std::vector<pid_t> tree{100};
  ASSERT_TRUE(b->device_util(tree, u));
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 70);
  usleep(2'100'000);
  // Then it agrees with ours (set back by 2 s), sampling every 0.3 s or so: each gap a little
  // longer than the one before, so that no sample is due a mere hair after the least lag says.
  for (int k = 0; k < 9; ++k) {
    if (k > 0) usleep(static_cast<useconds_t>(300'000 + 20'000 * k));
    g.set("process_util 100 " + std::to_string(40 + k) + "\n", 0);
    ASSERT_TRUE(b->device_util(tree, u));
    EXPECT_DOUBLE_EQ(*u[0].tree_busy, 40 + k) << "answer " << k << ": new, whatever the lag said";
  }
  // The next sample is 0.3 s away on the driver's clock, now that the 2 s lead is forgotten.
  const long calls = process_util_calls();
  ASSERT_TRUE(b->device_util(tree, u));
  EXPECT_EQ(process_util_calls(), calls);
  EXPECT_DOUBLE_EQ(*u[0].tree_busy, 48);
}

TEST(GpuUtil, AmdGpuBusyPercentFromSysfs) {
  ScratchDir root;
  const std::string drm = root.path() + "/sys/class/drm/";
  put(drm + "card0/device/uevent", "DRIVER=amdgpu\nPCI_SLOT_NAME=0000:03:00.0\n");
  put(drm + "card0/device/mem_info_vram_total", "25753026560\n");
  put(drm + "card0/device/gpu_busy_percent", "63\n");
  put(drm + "card0/device/mem_busy_percent", "12\n");
  put(drm + "card1/device/uevent", "DRIVER=amdgpu\nPCI_SLOT_NAME=0000:04:00.0\n");  // an older kernel: no busy files
  OpenOptions o;
  o.sys_root = root.path() + "/sys";
  o.proc_root = root.path() + "/proc";
  auto opened = open_amd(o);
  ASSERT_TRUE(opened.ok()) << opened.failure().message;
  auto b = std::move(*opened);
  ASSERT_EQ(b->devices().size(), 2u);
  std::vector<DeviceUtil> u(2);
  ASSERT_TRUE(b->device_util(std::vector<pid_t>{1}, u));
  EXPECT_TRUE(u[0].valid);
  EXPECT_DOUBLE_EQ(u[0].busy, 63);
  EXPECT_DOUBLE_EQ(u[0].mem_bw, 12);
  EXPECT_FALSE(u[0].tree_busy) << "amdgpu has no per-process share";
  EXPECT_FALSE(u[1].valid);
  EXPECT_FALSE(b->pcie_throughput(u));
  // The files are re-read on each query.
  put(drm + "card0/device/gpu_busy_percent", "5\n");
  ASSERT_TRUE(b->device_util(std::vector<pid_t>{1}, u));
  EXPECT_DOUBLE_EQ(u[0].busy, 5);
}

}  // namespace
}  // namespace qprof::gpu
