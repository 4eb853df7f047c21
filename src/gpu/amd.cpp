// SPDX-License-Identifier: Apache-2.0
// The "amd" backend: AMD (and Intel discrete) GPUs from the kernel alone. Devices and their
// totals from /sys/class/drm (amdgpu's mem_info_vram_*); the tree's memory from DRM fdinfo of
// its processes and from KFD's per-process counters, the larger of the two per device (KFD's
// allocations are in the render node's VM, so fdinfo counts them too on current kernels).
#include <dirent.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <mutex>

#include "common.hpp"
#include "qprof/gpu/backend.hpp"
#include "qprof/gpu/drm.hpp"
#include "qprof/common/proc_file.hpp"
#include "qprof/common/units.hpp"

namespace qprof::gpu {
namespace drm {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::optional<Bytes> parse_number(std::string_view s) {
  s = trim(s);
  Bytes n = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return n;
}

std::optional<Bytes> read_number(const std::string& path) {
  std::string text;
  if (!read_small_file(path, text, 256)) return std::nullopt;
  return parse_number(text);
}

// "KEY=value" of a uevent file.
std::string uevent_value(std::string_view text, std::string_view key) {
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.size() > key.size() && line.starts_with(key) && line[key.size()] == '=') {
      return std::string(trim(line.substr(key.size() + 1)));
    }
  }
  return {};
}

// "key value" of a KFD properties file.
std::optional<Bytes> property(std::string_view text, std::string_view key) {
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.size() > key.size() && line.starts_with(key) && line[key.size()] == ' ')
      return parse_number(line.substr(key.size() + 1));
  }
  return std::nullopt;
}

std::vector<std::string> list_dir(const std::string& path) {
  std::vector<std::string> names;
  DIR* dir = ::opendir(path.c_str());
  if (!dir) return names;
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] != '.') names.emplace_back(e->d_name);
  }
  ::closedir(dir);
  std::sort(names.begin(), names.end());
  return names;
}

bool is_card(std::string_view name) {
  if (!name.starts_with("card") || name.size() == 4) return false;
  return std::all_of(name.begin() + 4, name.end(), [](char c) { return c >= '0' && c <= '9'; });
}

}  // namespace

std::vector<SysDevice> sys_devices(const std::string& sys_root) {
  std::vector<SysDevice> out;
  const std::string drm = sys_root + "/class/drm";
  std::vector<std::string> cards;
  for (std::string& n : list_dir(drm)) {
    if (is_card(n)) cards.push_back(std::move(n));
  }
  // card2 before card10
  std::sort(cards.begin(), cards.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  for (const std::string& card : cards) {
    const std::string dev = drm + "/" + card + "/device";
    std::string uevent;
    if (!read_small_file(dev + "/uevent", uevent)) continue;
    SysDevice d;
    d.card = card;
    d.driver = uevent_value(uevent, "DRIVER");
    d.pdev = uevent_value(uevent, "PCI_SLOT_NAME");
    if (d.pdev.empty()) continue;
    const bool intel = d.driver == "i915" || d.driver == "xe";
    if (d.driver != "amdgpu" && !intel) continue;
    // Intel's integrated GPU always sits at 00:02.0 and has no memory of its own.
    if (intel && d.pdev.ends_with("0000:00:02.0")) continue;
    if (std::any_of(out.begin(), out.end(), [&](const SysDevice& o) { return o.pdev == d.pdev; })) continue;
    std::string name;
    if (read_small_file(dev + "/product_name", name, 256)) d.name = std::string(trim(name));
    if (d.name.empty()) {
      const std::string id = uevent_value(uevent, "PCI_ID");
      d.name = std::string(intel ? "Intel GPU" : "AMD GPU") + " (" + d.driver + (id.empty() ? "" : " " + id) + ")";
    }
    d.total = read_number(dev + "/mem_info_vram_total");
    if (read_number(dev + "/mem_info_vram_used")) d.used_path = dev + "/mem_info_vram_used";
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<KfdNode> kfd_nodes(const std::string& sys_root) {
  std::vector<KfdNode> out;
  const std::string nodes = sys_root + "/class/kfd/kfd/topology/nodes";
  for (const std::string& n : list_dir(nodes)) {
    const auto id = read_number(nodes + "/" + n + "/gpu_id");
    if (!id || *id == 0) continue;  // a CPU node
    std::string props;
    if (!read_small_file(nodes + "/" + n + "/properties", props)) continue;
    const auto domain = property(props, "domain");
    const auto location = property(props, "location_id");  // PCI bus << 8 | device << 3 | function
    if (!location) continue;
    char pdev[32];
    std::snprintf(pdev, sizeof pdev, "%04x:%02x:%02x.%x", static_cast<unsigned>(domain.value_or(0)),
                  static_cast<unsigned>((*location >> 8) & 0xff), static_cast<unsigned>((*location >> 3) & 0x1f),
                  static_cast<unsigned>(*location & 0x7));
    out.push_back(KfdNode{static_cast<std::uint32_t>(*id), pdev});
  }
  return out;
}

void read_kfd(const std::string& sys_root, std::span<const pid_t> pids, std::vector<KfdUsage>& out) {
  out.clear();
  const std::string procs = sys_root + "/class/kfd/kfd/proc/";
  for (const pid_t pid : pids) {
    const std::string dir = procs + std::to_string(pid);
    DIR* d = ::opendir(dir.c_str());
    if (!d) continue;
    while (const dirent* e = ::readdir(d)) {
      const std::string_view name = e->d_name;
      if (!name.starts_with("vram_")) continue;
      std::uint32_t gpu_id = 0;
      const auto [end, ec] = std::from_chars(name.data() + 5, name.data() + name.size(), gpu_id);
      if (ec != std::errc() || end != name.data() + name.size()) continue;
      const auto bytes = read_number(dir + "/" + e->d_name);
      if (!bytes) continue;
      auto it = std::find_if(out.begin(), out.end(), [&](const KfdUsage& u) { return u.gpu_id == gpu_id; });
      if (it == out.end()) {
        out.push_back(KfdUsage{gpu_id, 0, 0});
        it = out.end() - 1;
      }
      it->bytes += *bytes;
      ++it->processes;
    }
    ::closedir(d);
  }
}

}  // namespace drm

namespace {

class AmdBackend final : public Backend {
 public:
  AmdBackend(const OpenOptions& o, std::vector<drm::SysDevice> sys, std::vector<drm::KfdNode> kfd)
      : sys_root_(o.sys_root), sys_(std::move(sys)), kfd_(std::move(kfd)), fdinfo_(o.proc_root) {
    for (const drm::SysDevice& s : sys_) {
      Device d;
      d.uuid = s.pdev;
      d.name = s.name;
      d.total = s.total.value_or(0);
      devices_.push_back(std::move(d));
      used_files_.emplace_back(s.used_path.empty() ? std::string() : s.used_path);
      const std::string dev = o.sys_root + "/class/drm/" + s.card + "/device/";
      busy_files_.emplace_back(dev + "gpu_busy_percent");
      mem_busy_files_.emplace_back(dev + "mem_busy_percent");
    }
    for (drm::KfdNode& n : kfd_) kfd_device_.push_back(device_of(n.pdev));
  }

  std::string_view name() const override { return "amd"; }
  std::string description() const override {
    std::string s = "DRM fdinfo";
    if (!kfd_.empty()) s += " + KFD";
    return s + " + sysfs: " + detail::describe(devices_);
  }
  const std::vector<Device>& devices() const override { return devices_; }
  bool lists_every_process() const override { return false; }
  bool cuda_devices() const override { return false; }

  bool device_used(std::span<Bytes> used) noexcept override {
    bool any = false;
    for (std::size_t i = 0; i < used_files_.size() && i < used.size(); ++i) {
      used[i] = kUnknown;
      char buf[64];
      const ssize_t n = used_files_[i].read(buf, sizeof buf);
      if (n <= 0) continue;
      if (auto b = drm::parse_size(std::string_view(buf, static_cast<std::size_t>(n)))) {
        used[i] = *b;
        any = true;
      }
    }
    return any;
  }

  // amdgpu's gpu_busy_percent and mem_busy_percent (the driver's own sampling); no per-process
  // share and no PCIe rate (pcie_bw blocks for a second).
  bool device_util(std::span<const pid_t> pids, std::span<DeviceUtil> out) noexcept override {
    (void)pids;
    bool any = false;
    for (std::size_t i = 0; i < busy_files_.size() && i < out.size(); ++i) {
      out[i] = DeviceUtil{};
      const auto busy = read_percent(busy_files_[i]);
      if (!busy) continue;
      out[i].valid = true;
      out[i].busy = *busy;
      out[i].mem_bw = read_percent(mem_busy_files_[i]).value_or(0);
      any = true;
    }
    return any;
  }

  bool process_usage(std::span<const pid_t> pids, std::span<DeviceProcesses> out) noexcept override {
    try {
      for (DeviceProcesses& d : out) {
        d = DeviceProcesses{};
        d.status = DeviceProcesses::Status::ok;
      }
      fdinfo_.read(pids, pdev_usage_);
      for (const drm::PdevUsage& u : pdev_usage_) {
        const int i = device_of(u.pdev);
        if (i < 0 || static_cast<std::size_t>(i) >= out.size()) continue;
        out[i].tree = u.bytes;
        out[i].matched = out[i].listed = u.processes;
      }
      if (!kfd_.empty()) {
        drm::read_kfd(sys_root_, pids, kfd_usage_);
        for (const drm::KfdUsage& u : kfd_usage_) {
          int i = -1;
          for (std::size_t k = 0; k < kfd_.size(); ++k) {
            if (kfd_[k].gpu_id == u.gpu_id) i = kfd_device_[k];
          }
          if (i < 0 || static_cast<std::size_t>(i) >= out.size()) continue;
          out[i].tree = std::max(out[i].tree, u.bytes);
          out[i].matched = out[i].listed = std::max(out[i].matched, u.processes);
        }
      }
      return true;
    } catch (...) {
      for (DeviceProcesses& d : out) d.status = DeviceProcesses::Status::failed;
      return false;
    }
  }

 private:
  int device_of(std::string_view pdev) const {
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      if (devices_[i].uuid == pdev) return static_cast<int>(i);
    }
    return -1;
  }

  std::string sys_root_;
  std::vector<drm::SysDevice> sys_;
  std::vector<drm::KfdNode> kfd_;
  std::vector<int> kfd_device_;
  std::vector<Device> devices_;
  std::vector<ProcFile> used_files_;
  std::vector<ProcFile> busy_files_, mem_busy_files_;

  static std::optional<double> read_percent(const ProcFile& f) {
    char buf[32];
    const ssize_t n = f.read(buf, sizeof buf);
    if (n <= 0) return std::nullopt;
    const auto v = drm::parse_size(std::string_view(buf, static_cast<std::size_t>(n)));
    if (!v || *v > 100) return std::nullopt;
    return static_cast<double>(*v);
  }
  drm::FdinfoReader fdinfo_;
  std::vector<drm::PdevUsage> pdev_usage_;
  std::vector<drm::KfdUsage> kfd_usage_;
};

}  // namespace

Result<std::unique_ptr<Backend>> open_amd(const OpenOptions& o) {
  std::vector<drm::SysDevice> sys = drm::sys_devices(o.sys_root);
  if (sys.empty()) return Failure{"no amdgpu (or Intel discrete) device in " + o.sys_root + "/class/drm"};
  return std::unique_ptr<Backend>(std::make_unique<AmdBackend>(o, std::move(sys), drm::kfd_nodes(o.sys_root)));
}

}  // namespace qprof::gpu
