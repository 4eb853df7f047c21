// SPDX-License-Identifier: Apache-2.0
// AMD and Intel through the kernel: fdinfo parsing, KFD, sysfs, over the fixture tree
// tests/data/gpu/drm (see the comments of each case for what it holds).
#include "qprof/gpu/drm.hpp"

#include <gtest/gtest.h>

#include "gpu_test_util.hpp"
#include "qprof/gpu/backend.hpp"

namespace qprof::gpu {
namespace {

constexpr Bytes KiB = Bytes{1} << 10;
constexpr Bytes MiB = Bytes{1} << 20;
constexpr Bytes GiB = Bytes{1} << 30;

std::string root() { return test::gpu_data("drm"); }

TEST(GpuFdinfo, SizesInBytesKibAndMib) {
  EXPECT_EQ(drm::parse_size("0"), 0u);
  EXPECT_EQ(drm::parse_size("4096"), 4096u);
  EXPECT_EQ(drm::parse_size("4096 KiB"), 4096 * KiB);
  EXPECT_EQ(drm::parse_size(" 12 MiB\n"), 12 * MiB);
  EXPECT_EQ(drm::parse_size("2 GiB"), 2 * GiB);
  EXPECT_EQ(drm::parse_size("3 B"), 3u);
  EXPECT_FALSE(drm::parse_size("12 parsecs"));
  EXPECT_FALSE(drm::parse_size("KiB"));
  EXPECT_FALSE(drm::parse_size("-1 KiB"));
  EXPECT_FALSE(drm::parse_size("18446744073709551615 KiB")) << "overflow";
}

TEST(GpuFdinfo, NewAmdgpuPrefersResidentVram) {
  const char* text =
      "pos:\t0\nflags:\t02100002\ndrm-driver:\tamdgpu\ndrm-client-id:\t11\ndrm-pdev:\t0000:03:00.0\n"
      "drm-memory-vram:\t1048576 KiB\ndrm-memory-gtt: \t4096 KiB\ndrm-total-vram:\t1034 MiB\n"
      "drm-resident-vram:\t1024 MiB\ndrm-resident-gtt:\t4 MiB\ndrm-engine-gfx:\t1234 ns\n";
  drm::Client c;
  ASSERT_TRUE(drm::parse_fdinfo(text, c));
  EXPECT_EQ(c.driver, "amdgpu");
  EXPECT_EQ(c.pdev, "0000:03:00.0");
  EXPECT_EQ(c.client_id, 11u);
  EXPECT_EQ(c.vram, GiB);
}

TEST(GpuFdinfo, OldAmdgpuHasDrmMemoryVramInKib) {
  drm::Client c;
  ASSERT_TRUE(
      drm::parse_fdinfo("drm-driver:\tamdgpu\ndrm-pdev:\t0000:03:00.0\ndrm-client-id:\t15\n"
                        "drm-memory-vram:\t524288 KiB\ndrm-memory-gtt:\t1024 KiB\n",
                        c));
  EXPECT_EQ(c.vram, 512 * MiB);
}

TEST(GpuFdinfo, IntelI915LocalAndXeVramRegions) {
  drm::Client c;
  ASSERT_TRUE(
      drm::parse_fdinfo("drm-driver:\ti915\ndrm-pdev:\t0000:03:00.0\ndrm-client-id:\t7\n"
                        "drm-total-system0:\t4 MiB\ndrm-resident-system0:\t4 MiB\n"
                        "drm-total-local0:\t300 MiB\ndrm-resident-local0:\t256 MiB\n",
                        c));
  EXPECT_EQ(c.driver, "i915");
  EXPECT_EQ(c.vram, 256 * MiB) << "system memory is not the device's";
  ASSERT_TRUE(
      drm::parse_fdinfo("drm-driver:\txe\ndrm-pdev:\t0000:05:00.0\ndrm-client-id:\t3\n"
                        "drm-total-vram0:\t800 MiB\ndrm-total-vram1:\t200 MiB\n",
                        c));
  EXPECT_EQ(c.vram, 1000 * MiB) << "only totals printed: their sum over the device's regions";
}

TEST(GpuFdinfo, NotADrmClient) {
  drm::Client c;
  EXPECT_FALSE(drm::parse_fdinfo("pos:\t0\nflags:\t02\nmnt_id:\t24\n", c));
  ASSERT_TRUE(drm::parse_fdinfo("drm-driver:\tamdgpu\ndrm-pdev:\t0000:03:00.0\n", c));
  EXPECT_FALSE(c.vram) << "no memory keys";
  EXPECT_FALSE(c.client_id);
}

// The fixture's devices: two amdgpu (card0 with a product name, card1 without), an Intel iGPU
// at 00:02.0 (skipped: no memory of its own), an xe discrete GPU, a virtio card (skipped).
TEST(GpuSysfs, FindsAmdAndDiscreteIntelDevices) {
  const auto d = drm::sys_devices(root() + "/sys");
  ASSERT_EQ(d.size(), 3u);
  EXPECT_EQ(d[0].card, "card0");
  EXPECT_EQ(d[0].pdev, "0000:03:00.0");
  EXPECT_EQ(d[0].name, "AMD Radeon RX 7900 XTX");
  EXPECT_EQ(d[0].total, 24 * GiB);
  EXPECT_EQ(d[1].pdev, "0000:83:00.0");
  EXPECT_EQ(d[1].name, "AMD GPU (amdgpu 1002:74A1)");
  EXPECT_EQ(d[1].total, 192 * GiB);
  EXPECT_EQ(d[2].driver, "xe");
  EXPECT_EQ(d[2].pdev, "0000:05:00.0");
  EXPECT_FALSE(d[2].total);
  EXPECT_TRUE(d[2].used_path.empty());
}

TEST(GpuKfd, NodesMapGpuIdsToPciAddresses) {
  const auto n = drm::kfd_nodes(root() + "/sys");
  ASSERT_EQ(n.size(), 2u);  // node 0 is the CPU
  EXPECT_EQ(n[0].gpu_id, 48879u);
  EXPECT_EQ(n[0].pdev, "0000:03:00.0");
  EXPECT_EQ(n[1].gpu_id, 4660u);
  EXPECT_EQ(n[1].pdev, "0000:83:00.0");
}

TEST(GpuKfd, VramOfTheTreesProcessesOnly) {
  std::vector<drm::KfdUsage> u;
  const std::vector<pid_t> tree{100, 101};
  drm::read_kfd(root() + "/sys", tree, u);
  ASSERT_EQ(u.size(), 2u);
  std::sort(u.begin(), u.end(), [](auto& a, auto& b) { return a.gpu_id < b.gpu_id; });
  EXPECT_EQ(u[0].gpu_id, 4660u);
  EXPECT_EQ(u[0].bytes, 5 * GiB);
  EXPECT_EQ(u[1].gpu_id, 48879u);
  EXPECT_EQ(u[1].bytes, 256 * MiB) << "200's 2 GiB is not the tree's";
}

// 100 holds a client on each AMD GPU; 101, its forked child, shows 100's card0 client again
// (inherited: counted once) and one of its own in the old KiB format; 102 uses the xe GPU; 103
// has no GPU; 200 is not the tree's.
TEST(GpuFdinfo, DeduplicatesInheritedClientsAcrossTheTree) {
  drm::FdinfoReader r(root() + "/proc");
  std::vector<drm::PdevUsage> u;
  const std::vector<pid_t> tree{100, 101, 102, 103};
  r.read(tree, u);
  ASSERT_EQ(u.size(), 3u);
  std::sort(u.begin(), u.end(), [](auto& a, auto& b) { return a.pdev < b.pdev; });
  EXPECT_EQ(u[0].pdev, "0000:03:00.0");
  EXPECT_EQ(u[0].bytes, GiB + 512 * MiB);
  EXPECT_EQ(u[0].clients, 2u);
  EXPECT_EQ(u[0].processes, 2u);
  EXPECT_EQ(u[1].pdev, "0000:05:00.0");
  EXPECT_EQ(u[1].bytes, 700 * MiB);
  EXPECT_EQ(u[2].pdev, "0000:83:00.0");
  EXPECT_EQ(u[2].bytes, 4 * GiB);
  // Each process alone sees the client it holds.
  r.read(std::vector<pid_t>{101}, u);
  ASSERT_EQ(u.size(), 1u);
  EXPECT_EQ(u[0].bytes, GiB + 512 * MiB);
}

TEST(GpuAmdBackend, DevicesTotalsAndTheTreesMemory) {
  OpenOptions o;
  o.proc_root = root() + "/proc";
  o.sys_root = root() + "/sys";
  auto opened = open_amd(o);
  ASSERT_TRUE(opened.ok()) << opened.failure().message;
  auto b = std::move(*opened);
  EXPECT_EQ(b->name(), "amd");
  EXPECT_FALSE(b->lists_every_process());
  EXPECT_FALSE(b->cuda_devices());
  ASSERT_EQ(b->devices().size(), 3u);
  EXPECT_EQ(b->devices()[0].uuid, "0000:03:00.0");
  EXPECT_EQ(b->devices()[0].total, 24 * GiB);
  std::vector<Bytes> used(3);
  EXPECT_TRUE(b->device_used(used));
  EXPECT_EQ(used, (std::vector<Bytes>{3 * GiB, 10 * GiB, kUnknown}));
  std::vector<DeviceProcesses> out(3);
  const std::vector<pid_t> tree{100, 101, 102, 103};
  EXPECT_TRUE(b->process_usage(tree, out));
  EXPECT_EQ(out[0].status, DeviceProcesses::Status::ok);
  EXPECT_EQ(out[0].tree, GiB + 512 * MiB) << "fdinfo (1.5 GiB) above KFD (256 MiB)";
  EXPECT_EQ(out[0].matched, 2u);
  EXPECT_EQ(out[1].tree, 5 * GiB) << "KFD (5 GiB) above fdinfo (4 GiB)";
  EXPECT_EQ(out[2].tree, 700 * MiB);
  const std::string d = b->description();
  EXPECT_EQ(d.rfind("DRM fdinfo + KFD + sysfs: AMD Radeon RX 7900 XTX 0000:03:00.0 24.0 GiB", 0), 0u) << d;
  // Without 100 and 101 (200 is not asked for), card0 holds nothing of the tree.
  EXPECT_TRUE(b->process_usage(std::vector<pid_t>{102, 103}, out));
  EXPECT_EQ(out[0].tree, 0u);
  EXPECT_EQ(out[0].matched, 0u);
  EXPECT_EQ(out[2].tree, 700 * MiB);
}

TEST(GpuAmdBackend, NoDeviceNoBackend) {
  OpenOptions o;
  o.sys_root = root() + "/proc";  // no class/drm there
  const auto opened = open_amd(o);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.failure().message.find("no amdgpu"), std::string::npos);
}

}  // namespace
}  // namespace qprof::gpu
