// SPDX-License-Identifier: Apache-2.0
// The smi backend: nvidia-smi CSV and rocm-smi JSON parsers over recorded output, and the
// backends over the fake nvidia-smi / rocm-smi scripts (tests/fakes).
#include "qprof/gpu/smi.hpp"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <functional>
#include <sstream>

#include "e2e/e2e_util.hpp"
#include "gpu_test_util.hpp"
#include "qprof/common/clock.hpp"
#include "qprof/gpu/backend.hpp"

namespace qprof::gpu {
namespace {

constexpr Bytes MiB = Bytes{1} << 20;
constexpr Bytes GiB = Bytes{1} << 30;

TEST(GpuSmiCsv, GpuRows) {
  smi::GpuRow r;
  ASSERT_TRUE(smi::parse_gpu_row("0, GPU-8932f937-d72c-4106-c12f-20bd9faed9f6, 81559, 1024, NVIDIA H100 80GB HBM3", r));
  EXPECT_EQ(r.index, 0);
  EXPECT_EQ(r.uuid, "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6");
  EXPECT_EQ(r.total, 81559 * MiB);
  EXPECT_EQ(r.used, 1024 * MiB);
  EXPECT_EQ(r.name, "NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(smi::parse_gpu_row("1, GPU-x, [N/A], [N/A], Tesla K80, rev 2", r));
  EXPECT_FALSE(r.total);
  EXPECT_FALSE(r.used);
  EXPECT_EQ(r.name, "Tesla K80, rev 2") << "the name is the rest of the line";
  EXPECT_FALSE(smi::parse_gpu_row("", r));
  EXPECT_FALSE(smi::parse_gpu_row("No devices were found", r));
}

TEST(GpuSmiCsv, UsedRows) {
  std::string uuid;
  std::optional<Bytes> used;
  ASSERT_TRUE(smi::parse_used_row(" GPU-abc,  2048", uuid, used));
  EXPECT_EQ(uuid, "GPU-abc");
  EXPECT_EQ(used, 2048 * MiB);
  ASSERT_TRUE(smi::parse_used_row("GPU-abc, [Not Supported]", uuid, used));
  EXPECT_FALSE(used);
  EXPECT_FALSE(smi::parse_used_row("", uuid, used));
}

TEST(GpuSmiCsv, AppRowsIncludingNotAvailable) {
  smi::AppRow a;
  ASSERT_TRUE(smi::parse_app_row("4242, GPU-8932f937-d72c-4106-c12f-20bd9faed9f6, 1536", a));
  EXPECT_EQ(a.pid, 4242);
  EXPECT_EQ(a.uuid, "GPU-8932f937-d72c-4106-c12f-20bd9faed9f6");
  EXPECT_EQ(a.used, 1536 * MiB);
  ASSERT_TRUE(smi::parse_app_row("17, GPU-1, [N/A]", a));
  EXPECT_FALSE(a.used) << "Windows WDDM or a container: no figure, not zero";
  EXPECT_FALSE(smi::parse_app_row("", a));
  EXPECT_FALSE(smi::parse_app_row("No running processes found", a));
  EXPECT_FALSE(smi::parse_app_row("pid, gpu_uuid, used_gpu_memory [MiB]", a)) << "a header line";
  EXPECT_FALSE(smi::parse_mib("-5"));
  EXPECT_EQ(smi::parse_mib("0"), 0u);
}

TEST(GpuRocmJson, MeminfoOfRocm6WithALogLineFirst) {
  const auto c = smi::parse_rocm_meminfo(test::slurp(test::gpu_data("rocm-smi/meminfo_rocm6.json")));
  ASSERT_TRUE(c);
  ASSERT_EQ(c->size(), 2u);
  EXPECT_EQ((*c)[0].key, "card0");
  EXPECT_EQ((*c)[0].total, 68702699520u);
  EXPECT_EQ((*c)[0].used, 10960896u);
  EXPECT_EQ((*c)[0].bus, "0000:03:00.0");
  EXPECT_EQ((*c)[0].name, "AMD Instinct MI210");
  EXPECT_EQ((*c)[1].used, 4305281024u);
}

TEST(GpuRocmJson, MeminfoOfRocm4AndNumbersAsNumbers) {
  auto c = smi::parse_rocm_meminfo(test::slurp(test::gpu_data("rocm-smi/meminfo_rocm4.json")));
  ASSERT_TRUE(c);
  ASSERT_EQ(c->size(), 1u);
  EXPECT_EQ((*c)[0].total, 17163091968u);
  EXPECT_EQ((*c)[0].used, 1118208u);
  EXPECT_TRUE((*c)[0].bus.empty());
  c = smi::parse_rocm_meminfo(test::slurp(test::gpu_data("rocm-smi/meminfo_single.json")));
  ASSERT_TRUE(c);
  EXPECT_EQ((*c)[0].used, 2 * GiB);
  EXPECT_FALSE(smi::parse_rocm_meminfo("ERROR: no GPU"));
  EXPECT_FALSE(smi::parse_rocm_meminfo("{\"card0\": {"));
}

TEST(GpuRocmJson, PidsInEveryShape) {
  auto p = smi::parse_rocm_pids(test::slurp(test::gpu_data("rocm-smi/pids_rocm6.json")));
  ASSERT_TRUE(p);
  ASSERT_EQ(p->size(), 3u);
  EXPECT_EQ((*p)[0].pid, 777);
  EXPECT_EQ((*p)[0].vram, 512 * MiB) << "a name with a space became two fields";
  EXPECT_EQ((*p)[0].gpus, 2);
  EXPECT_EQ((*p)[1].pid, 4242);
  EXPECT_EQ((*p)[1].vram, GiB);
  p = smi::parse_rocm_pids(test::slurp(test::gpu_data("rocm-smi/pids_unknown.json")));
  ASSERT_TRUE(p);
  ASSERT_EQ(p->size(), 1u);
  EXPECT_FALSE((*p)[0].vram);
  p = smi::parse_rocm_pids(test::slurp(test::gpu_data("rocm-smi/pids_name_only.json")));
  ASSERT_TRUE(p);
  ASSERT_EQ(p->size(), 1u);
  EXPECT_FALSE((*p)[0].vram);
  p = smi::parse_rocm_pids(test::slurp(test::gpu_data("rocm-smi/pids_none.json")));
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->empty());
  p = smi::parse_rocm_pids("");
  ASSERT_TRUE(p);
  EXPECT_TRUE(p->empty());
  EXPECT_FALSE(smi::parse_rocm_pids("Traceback (most recent call last):"));
}

// Waits up to 10 s for `ok`.
bool eventually(const std::function<bool()>& ok) {
  const std::int64_t end = monotonic_ns() + 10'000'000'000;
  while (monotonic_ns() < end) {
    if (ok()) return true;
    usleep(10'000);
  }
  return ok();
}

// The PIDs the fake recorded as it started, one per run.
std::vector<pid_t> started(const std::string& calls, const std::string& with) {
  std::vector<pid_t> out;
  std::istringstream in(test::slurp(calls));
  std::string line;
  while (std::getline(in, line)) {
    if (line.find(with) != std::string::npos) out.push_back(static_cast<pid_t>(std::stol(line)));
  }
  return out;
}

class FakeSmiDir {
 public:
  FakeSmiDir() { ::setenv("QPROF_FAKE_SMI_DIR", dir.path().c_str(), 1); }
  ~FakeSmiDir() { ::unsetenv("QPROF_FAKE_SMI_DIR"); }
  void put(const std::string& name, const std::string& text) { test::write_atomically(dir.file(name), text); }
  test::ScratchDir dir;
};

TEST(GpuNvidiaSmi, TwoLongRunningChildrenStartedOnceAndStoppedCleanly) {
  FakeSmiDir fake;
  fake.put("gpus", "0, GPU-aaaa, 81559, 1024, NVIDIA H100 80GB HBM3\n1, GPU-bbbb, 24564, 0, NVIDIA RTX A5000\n");
  fake.put("apps", "4242, GPU-aaaa, 1536\n777, GPU-aaaa, 2048\n4243, GPU-bbbb, [N/A]\n");
  OpenOptions o;
  o.path = test::fake_scripts_dir();
  o.smi_interval_ms = 50;
  auto opened = open_smi(o);
  ASSERT_TRUE(opened.ok()) << opened.failure().message;
  auto b = std::move(*opened);
  EXPECT_EQ(b->name(), "nvidia-smi");
  EXPECT_TRUE(b->lists_every_process());
  ASSERT_EQ(b->devices().size(), 2u);
  EXPECT_EQ(b->devices()[0].uuid, "GPU-aaaa");
  EXPECT_EQ(b->devices()[0].total, 81559 * MiB);
  EXPECT_EQ(b->devices()[1].vendor_index, 1);
  EXPECT_EQ(b->description().rfind("nvidia-smi -lms 50 (", 0), 0u) << b->description();

  std::vector<Bytes> used(2);
  ASSERT_TRUE(eventually([&] { return b->device_used(used) && used[1] != kUnknown; }));
  EXPECT_EQ(used, (std::vector<Bytes>{1024 * MiB, 0}));

  std::vector<DeviceProcesses> out(2);
  const std::vector<pid_t> tree{4242, 4243};
  ASSERT_TRUE(eventually([&] { return b->process_usage(tree, out) && out[0].listed == 2; }));
  EXPECT_EQ(out[0].tree, 1536 * MiB);
  EXPECT_EQ(out[0].matched, 1u);
  EXPECT_EQ(out[1].matched, 1u);
  EXPECT_EQ(out[1].unknown, 1u);

  // Every process gone: an empty output, seen as an empty list.
  fake.put("apps", "");
  ASSERT_TRUE(eventually([&] { return b->process_usage(tree, out) && out[0].listed == 0 && out[1].listed == 0; }));
  fake.put("apps", "4242, GPU-bbbb, 100\n");
  ASSERT_TRUE(eventually([&] { return b->process_usage(tree, out) && out[1].tree == 100 * MiB; }));
  EXPECT_EQ(out[0].listed, 0u);

  const std::string calls = fake.dir.file("calls");
  const auto loops = started(calls, "-lms 50");
  EXPECT_EQ(loops.size(), 2u) << test::slurp(calls);
  EXPECT_EQ(started(calls, "--query").size(), 3u) << "one listing, two loops: no fork per sample";
  b.reset();
  for (pid_t pid : loops) {
    errno = 0;
    EXPECT_EQ(::kill(pid, 0), -1) << "the -lms child " << pid << " is stopped and reaped";
    EXPECT_EQ(errno, ESRCH);
  }
}

// fit --gpu reads the compute and MIG modes: one nvidia-smi query, the row of the device's UUID.
TEST(GpuNvidiaSmi, ModesAreReadByUuid) {
  FakeSmiDir fake;
  fake.put("gpus", "0, GPU-aaaa, 81559, 1024, NVIDIA H100 80GB HBM3\n1, GPU-bbbb, 24564, 0, NVIDIA RTX A5000\n");
  fake.put("modes", "GPU-bbbb, Prohibited, [N/A]\nGPU-aaaa, Default, Enabled\n");
  OpenOptions o;
  o.path = test::fake_scripts_dir();
  auto opened = open_smi(o);
  ASSERT_TRUE(opened.ok()) << opened.failure().message;
  auto b = std::move(*opened);
  EXPECT_EQ(b->modes(0).compute, ComputeMode::default_mode);
  EXPECT_EQ(b->modes(0).mig, true);
  EXPECT_EQ(b->modes(1).compute, ComputeMode::prohibited);
  EXPECT_EQ(b->modes(1).mig, false) << "[N/A]: a GPU without MIG";
  fake.put("modes", "GPU-aaaa, Exclusive_Process, Disabled\n");
  EXPECT_EQ(b->modes(0).compute, ComputeMode::exclusive_process);
  EXPECT_EQ(b->modes(1).compute, std::nullopt) << "a device the answer does not list";
}

// A pipe qprof holds without O_CLOEXEC (as the stderr tee's could be) must reach its EOF.
TEST(GpuNvidiaSmi, ItsChildrenHoldNoneOfQprofsDescriptors) {
  FakeSmiDir fake;
  fake.put("gpus", "0, GPU-aaaa, 81559, 1024, NVIDIA H100 80GB HBM3\n");
  int p[2];
  ASSERT_EQ(::pipe(p), 0);
  OpenOptions o;
  o.path = test::fake_scripts_dir();
  auto opened = open_smi(o);
  ASSERT_TRUE(opened.ok()) << opened.failure().message;
  auto b = std::move(*opened);
  ::close(p[1]);
  pollfd pfd{p[0], POLLIN, 0};
  EXPECT_EQ(::poll(&pfd, 1, 5000), 1) << "a child kept the write end";
  char c;
  EXPECT_EQ(::read(p[0], &c, 1), 0);
  ::close(p[0]);
}

TEST(GpuNvidiaSmi, OnPathThroughTheFactory) {
  FakeSmiDir fake;
  fake.put("gpus", "0, GPU-aaaa, 81559, 1024, NVIDIA H100 80GB HBM3\n");
  const auto r = test::run({"/bin/sh", "-c",
                            "env -u QPROF_NVML_LIBRARY LD_LIBRARY_PATH=/nonexistent PATH=" + test::fake_scripts_dir() +
                                ":/usr/bin:/bin " + test::gpu_probe_bin() + " smi"});
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("GPU: nvidia-smi -lms 100 ("), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("device 0 GPU-aaaa 85520809984 NVIDIA H100 80GB HBM3"), std::string::npos) << r.out;
}

// rocm-smi alone on the path.
class FakeRocm : public FakeSmiDir {
 public:
  FakeRocm() {
    std::filesystem::create_directories(bin.path());
    std::filesystem::create_symlink(test::fake_scripts_dir() + "/rocm-smi", bin.file("rocm-smi"));
  }
  test::ScratchDir bin;
};

TEST(GpuRocmSmi, OneGpuPerProcessFiguresAndTotals) {
  FakeRocm fake;
  fake.put("rocm_meminfo.json", test::slurp(test::gpu_data("rocm-smi/meminfo_single.json")));
  fake.put("rocm_pids.json", test::slurp(test::gpu_data("rocm-smi/pids_rocm6.json")));
  OpenOptions o;
  o.path = fake.bin.path();
  o.smi_interval_ms = 100;
  auto opened = open_smi(o);
  ASSERT_TRUE(opened.ok()) << opened.failure().message;
  auto b = std::move(*opened);
  EXPECT_EQ(b->name(), "rocm-smi");
  ASSERT_EQ(b->devices().size(), 1u);
  EXPECT_EQ(b->devices()[0].uuid, "0000:2f:00.0");
  EXPECT_EQ(b->devices()[0].name, "Radeon RX 7900 XTX");
  EXPECT_EQ(b->devices()[0].total, 25753026560u);
  std::vector<Bytes> used(1);
  ASSERT_TRUE(eventually([&] { return b->device_used(used); }));
  EXPECT_EQ(used[0], 2 * GiB);
  std::vector<DeviceProcesses> out(1);
  const std::vector<pid_t> tree{4242, 4243};
  ASSERT_TRUE(eventually([&] { return b->process_usage(tree, out); }));
  EXPECT_EQ(out[0].status, DeviceProcesses::Status::ok);
  EXPECT_EQ(out[0].listed, 3u);
  EXPECT_EQ(out[0].matched, 2u);
  EXPECT_EQ(out[0].tree, GiB + 256 * MiB);
  // One shell helper for the whole run; each query is a run of rocm-smi under it.
  b.reset();
  const auto runs = started(fake.dir.file("calls"), "--show");
  EXPECT_GE(runs.size(), 3u);
}

TEST(GpuRocmSmi, SeveralGpusCannotBeSplitPerProcess) {
  FakeRocm fake;
  fake.put("rocm_meminfo.json", test::slurp(test::gpu_data("rocm-smi/meminfo_rocm6.json")));
  fake.put("rocm_pids.json", test::slurp(test::gpu_data("rocm-smi/pids_rocm6.json")));
  OpenOptions o;
  o.path = fake.bin.path();
  auto opened = open_smi(o);
  ASSERT_TRUE(opened.ok()) << opened.failure().message;
  auto b = std::move(*opened);
  ASSERT_EQ(b->devices().size(), 2u);
  EXPECT_EQ(b->devices()[1].uuid, "0000:83:00.0");
  std::vector<DeviceProcesses> out(2);
  ASSERT_TRUE(eventually([&] { return b->process_usage(std::vector<pid_t>{4242}, out); }));
  EXPECT_EQ(out[0].status, DeviceProcesses::Status::unavailable);
  std::vector<std::string> w;
  b->take_warnings(w);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("summed over its GPUs"), std::string::npos);
}

}  // namespace
}  // namespace qprof::gpu
