// SPDX-License-Identifier: Apache-2.0
// The kernel's DRM fdinfo (Documentation/gpu/drm-usage-stats.rst): per open DRM device file,
// "key:\tvalue" lines. One reader for amdgpu, i915 and xe.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "qprof/gpu/drm.hpp"
#include "qprof/common/proc_file.hpp"

namespace qprof::gpu::drm {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r' || s.back() == '\n'))
    s.remove_suffix(1);
  return s;
}

// Regions that are the device's own memory: amdgpu "vram", xe "vram0", i915 "local0".
bool device_local(std::string_view region) { return region.starts_with("vram") || region.starts_with("local"); }

}  // namespace

std::optional<Bytes> parse_size(std::string_view value) {
  value = trim(value);
  Bytes n = 0;
  const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
  if (ec != std::errc() || end == value.data()) return std::nullopt;
  const std::string_view unit = trim(std::string_view(end, value.data() + value.size() - end));
  int shift = 0;
  if (unit.empty() || unit == "B") {
    shift = 0;
  } else if (unit == "KiB" || unit == "kB" || unit == "KB") {
    shift = 10;
  } else if (unit == "MiB" || unit == "MB") {
    shift = 20;
  } else if (unit == "GiB" || unit == "GB") {
    shift = 30;
  } else {
    return std::nullopt;
  }
  if (shift > 0 && n > (~Bytes{0} >> shift)) return std::nullopt;
  return n << shift;
}

bool parse_fdinfo(std::string_view text, Client& out) {
  out = Client{};
  Bytes resident = 0, total = 0;
  bool has_resident = false, has_total = false;
  std::optional<Bytes> legacy;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = trim(line.substr(0, colon));
    const std::string_view value = trim(line.substr(colon + 1));
    if (!key.starts_with("drm-")) continue;
    if (key == "drm-driver") {
      out.driver = value;
    } else if (key == "drm-pdev") {
      out.pdev = value;
    } else if (key == "drm-client-id") {
      std::uint64_t id = 0;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), id);
      if (ec == std::errc() && end == value.data() + value.size()) out.client_id = id;
    } else if (key.starts_with("drm-resident-") && device_local(key.substr(13))) {
      if (auto b = parse_size(value)) {
        resident += *b;
        has_resident = true;
      }
    } else if (key.starts_with("drm-total-") && device_local(key.substr(10))) {
      if (auto b = parse_size(value)) {
        total += *b;
        has_total = true;
      }
    } else if (key == "drm-memory-vram") {
      legacy = parse_size(value);
    }
  }
  if (out.driver.empty()) return false;
  if (has_resident) {
    out.vram = resident;
  } else if (legacy) {
    out.vram = legacy;
  } else if (has_total) {
    out.vram = total;
  }
  return true;
}

FdinfoReader::FdinfoReader(std::string proc_root) : proc_root_(std::move(proc_root)) {}

void FdinfoReader::read(std::span<const pid_t> pids, std::vector<PdevUsage>& out) {
  out.clear();
  seen_.clear();
  for (const pid_t pid : pids) {
    path_ = proc_root_ + "/" + std::to_string(pid) + "/fd";
    DIR* dir = ::opendir(path_.c_str());
    if (!dir) continue;  // gone, or not ours to read
    const int dfd = ::dirfd(dir);
    bool counted_here[64] = {};  // this process already counted on out[i] (i < 64)
    while (const dirent* e = ::readdir(dir)) {
      if (e->d_name[0] == '.') continue;
      char target[256];
      const ssize_t n = ::readlinkat(dfd, e->d_name, target, sizeof target - 1);
      if (n <= 0) continue;
      target[n] = '\0';
      if (std::strncmp(target, "/dev/dri/", 9) != 0) continue;
      if (!read_small_file(proc_root_ + "/" + std::to_string(pid) + "/fdinfo/" + e->d_name, text_)) continue;
      Client c;
      if (!parse_fdinfo(text_, c) || c.pdev.empty() || !c.vram) continue;
      auto it = std::find_if(out.begin(), out.end(), [&](const PdevUsage& u) { return u.pdev == c.pdev; });
      if (it == out.end()) {
        out.push_back(PdevUsage{std::string(c.pdev), 0, 0, 0});
        it = out.end() - 1;
      }
      const std::size_t slot = static_cast<std::size_t>(it - out.begin());
      if (slot < 64 && !counted_here[slot]) {
        counted_here[slot] = true;
        ++it->processes;
      }
      if (c.client_id) {
        const bool dup = std::any_of(seen_.begin(), seen_.end(),
                                     [&](const Seen& s) { return s.client == *c.client_id && s.pdev == c.pdev; });
        if (dup) continue;  // inherited, or the same client through a dup()ed descriptor
        seen_.push_back(Seen{std::string(c.pdev), *c.client_id});
      }
      it->bytes += *c.vram;
      ++it->clients;
    }
    ::closedir(dir);
  }
}

}  // namespace qprof::gpu::drm
