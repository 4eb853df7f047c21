// SPDX-License-Identifier: Apache-2.0
// AMD and Intel GPU memory without a vendor library: the kernel's DRM fdinfo
// (/proc/PID/fdinfo/FD of DRM device files), AMD's KFD (/sys/class/kfd/kfd/proc/PID/vram_*) and
// amdgpu's sysfs device totals (/sys/class/drm/cardN/device/mem_info_vram_*). Every reader takes
// a root directory, so tests point it at a fixture tree. The backend itself: open_amd (gpu.hpp).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qprof/trace/trace.hpp"

namespace qprof::gpu::drm {

// An fdinfo memory value: "<uint>", "<uint> KiB", "<uint> MiB" (the kernel's units), "GiB" too.
std::optional<Bytes> parse_size(std::string_view value);

// What one DRM client's fdinfo says.
struct Client {
  std::string_view driver;                 // drm-driver: amdgpu, i915, xe, …
  std::string_view pdev;                   // drm-pdev: the device's PCI address
  std::optional<std::uint64_t> client_id;  // drm-client-id: one per open of the device file
  // Device-local memory (VRAM) the client holds: Σ drm-resident-<vram|local…> when the kernel
  // prints them, else amdgpu's drm-memory-vram, else Σ drm-total-<vram|local…>.
  std::optional<Bytes> vram;
};

// Parses one fdinfo file. False when it is not a DRM client's (no drm-driver). The views point
// into `text`.
bool parse_fdinfo(std::string_view text, Client& out);

// One GPU in /sys/class/drm (amdgpu; i915 and xe unless integrated, which have no VRAM).
struct SysDevice {
  std::string card;    // card0
  std::string pdev;    // 0000:03:00.0
  std::string driver;  // amdgpu, i915, xe
  std::string name;
  std::optional<Bytes> total;  // mem_info_vram_total
  std::string used_path;       // mem_info_vram_used, empty without it
};
std::vector<SysDevice> sys_devices(const std::string& sys_root);

// KFD's GPU ids and their PCI addresses (topology/nodes/N: gpu_id, properties domain/location_id).
struct KfdNode {
  std::uint32_t gpu_id = 0;
  std::string pdev;
};
std::vector<KfdNode> kfd_nodes(const std::string& sys_root);

// The tree's VRAM per device from fdinfo, deduplicated by (drm-pdev, drm-client-id): forked
// children inherit their parent's descriptors, and both show the same client.
struct PdevUsage {
  std::string pdev;
  Bytes bytes = 0;
  std::uint32_t processes = 0;  // processes of the tree with a client on the device
  std::uint32_t clients = 0;    // distinct clients counted
};
class FdinfoReader {
 public:
  explicit FdinfoReader(std::string proc_root);
  // `pids` ascending and unique; `out` is cleared and gets one entry per device seen.
  void read(std::span<const pid_t> pids, std::vector<PdevUsage>& out);

 private:
  std::string proc_root_;
  std::string path_;
  std::string text_;
  struct Seen {
    std::string pdev;
    std::uint64_t client;
  };
  std::vector<Seen> seen_;
};

// The tree's VRAM per KFD gpu id, from /sys/class/kfd/kfd/proc/PID/vram_<gpu_id>.
struct KfdUsage {
  std::uint32_t gpu_id = 0;
  Bytes bytes = 0;
  std::uint32_t processes = 0;
};
void read_kfd(const std::string& sys_root, std::span<const pid_t> pids, std::vector<KfdUsage>& out);

}  // namespace qprof::gpu::drm
