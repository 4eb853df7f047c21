// SPDX-License-Identifier: Apache-2.0
// CUDA_VISIBLE_DEVICES as CUDA reads it, mapped onto NVML's devices; --gpu choices.
#include <gtest/gtest.h>

#include "qprof/gpu/backend.hpp"

namespace qprof::gpu {
namespace {

Device gpu(int index, std::string uuid, std::string name = "NVIDIA A100-SXM4-80GB") {
  Device d;
  d.uuid = std::move(uuid);
  d.name = std::move(name);
  d.vendor_index = index;
  return d;
}

Device mig(int index, std::string uuid, std::string parent) {
  Device d = gpu(index, std::move(uuid), "NVIDIA A100-SXM4-80GB MIG 3g.40gb");
  d.parent_uuid = std::move(parent);
  return d;
}

const std::vector<Device> kFour{gpu(0, "GPU-aaaa1111"), gpu(1, "GPU-bbbb2222"), gpu(2, "GPU-cccc3333"),
                                gpu(3, "GPU-aaab4444")};

std::vector<bool> vis(const std::vector<Device>& d, std::optional<std::string_view> v,
                      std::optional<std::string_view> order = std::nullopt, std::string* warning = nullptr) {
  return visible_devices(d, v, order, warning);
}

using B = std::vector<bool>;

TEST(GpuVisible, UnsetMeansEveryDevice) { EXPECT_EQ(vis(kFour, std::nullopt), B(4, true)); }

TEST(GpuVisible, EmptyMeansNoDevice) {
  EXPECT_EQ(vis(kFour, ""), B(4, false));
  EXPECT_EQ(vis(kFour, "-1"), B(4, false));
}

TEST(GpuVisible, IndicesOfIdenticalGpusAreNvmlIndices) {
  EXPECT_EQ(vis(kFour, "2"), (B{false, false, true, false}));
  EXPECT_EQ(vis(kFour, "3, 1"), (B{false, true, false, true}));
}

TEST(GpuVisible, ParsingStopsAtTheFirstInvalidEntry) {
  EXPECT_EQ(vis(kFour, "1,7,2"), (B{false, true, false, false}));
  EXPECT_EQ(vis(kFour, "0,,2"), (B{true, false, false, false}));
  EXPECT_EQ(vis(kFour, "x,2"), B(4, false));
}

TEST(GpuVisible, UuidsAndUniquePrefixes) {
  EXPECT_EQ(vis(kFour, "GPU-cccc3333,GPU-b"), (B{false, true, true, false}));
  std::string w;
  EXPECT_EQ(vis(kFour, "GPU-aaa", std::nullopt, &w), B(4, false)) << "ambiguous: two GPUs start so";
  EXPECT_NE(w.find("GPU-aaa"), std::string::npos);
}

TEST(GpuVisible, MixedModelsCannotMapIndicesUnlessPciOrder) {
  const std::vector<Device> mixed{gpu(0, "GPU-aaaa", "NVIDIA RTX A2000"), gpu(1, "GPU-bbbb", "NVIDIA RTX 4090")};
  std::string w;
  EXPECT_EQ(vis(mixed, "1", std::nullopt, &w), B(2, true));
  EXPECT_NE(w.find("CUDA_DEVICE_ORDER=PCI_BUS_ID"), std::string::npos) << w;
  w.clear();
  EXPECT_EQ(vis(mixed, "1", "PCI_BUS_ID", &w), (B{false, true}));
  EXPECT_TRUE(w.empty());
  EXPECT_EQ(vis(mixed, "GPU-bbbb", std::nullopt, &w), (B{false, true})) << "UUIDs always map";
}

TEST(GpuVisible, MigDevicesByTheirUuidOrTheirParent) {
  const std::vector<Device> d{mig(0, "MIG-1111", "GPU-p0"), mig(0, "MIG-2222", "GPU-p0"), gpu(1, "GPU-p1")};
  EXPECT_EQ(vis(d, "MIG-2222"), (B{false, true, false}));
  EXPECT_EQ(vis(d, "GPU-p0"), (B{true, true, false}));
  EXPECT_EQ(vis(d, "0"), (B{true, true, false})) << "MIG names keep the model: indices map";
  EXPECT_EQ(vis(d, "1"), (B{false, false, true}));
}

TEST(GpuChoice, ParsesTheFiveChoices) {
  EXPECT_EQ(parse_choice("auto"), Choice::automatic);
  EXPECT_EQ(parse_choice("nvml"), Choice::nvml);
  EXPECT_EQ(parse_choice("amd"), Choice::amd);
  EXPECT_EQ(parse_choice("smi"), Choice::smi);
  EXPECT_EQ(parse_choice("none"), Choice::none);
  EXPECT_FALSE(parse_choice("cuda"));
  EXPECT_EQ(choice_name(Choice::automatic), "auto");
}

TEST(GpuChoice, NoneIsOneLineAndNoBackend) {
  const Selection s = open_backend(Choice::none);
  EXPECT_FALSE(s.backend);
  EXPECT_EQ(s.message, "GPU: not recorded (--gpu none)");
  EXPECT_FALSE(s.failed_request);
}

TEST(GpuChoice, AnExplicitChoiceThatFindsNothingSaysWhy) {
  OpenOptions o;
  o.sys_root = "/nonexistent";
  const Selection s = open_backend(Choice::amd, o);
  EXPECT_FALSE(s.backend);
  EXPECT_TRUE(s.failed_request);
  EXPECT_EQ(s.message,
            "GPU: --gpu amd found nothing (amd: no amdgpu (or Intel discrete) device in /nonexistent/class/drm); "
            "no GPU memory is recorded");
}

TEST(GpuChoice, AutoTriesEachAndSaysWhatItTried) {
  OpenOptions o;
  o.nvml_library = "/nonexistent/libnvidia-ml.so.1";
  o.sys_root = "/nonexistent";
  o.path = "/nonexistent";
  const Selection s = open_backend(Choice::automatic, o);
  EXPECT_FALSE(s.backend);
  EXPECT_FALSE(s.failed_request) << "no GPU is a normal case";
  EXPECT_EQ(s.message.rfind("GPU: none found (nvml: cannot load /nonexistent/libnvidia-ml.so.1", 0), 0u) << s.message;
  EXPECT_NE(s.message.find("; amd: no amdgpu"), std::string::npos) << s.message;
  EXPECT_NE(s.message.find("; smi: no nvidia-smi on PATH, no rocm-smi on PATH)"), std::string::npos) << s.message;
}

}  // namespace
}  // namespace qprof::gpu
