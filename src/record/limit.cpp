// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/limit.hpp"

#include <sys/resource.h>

#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <string_view>
#include <vector>

#include "qprof/common/proc_file.hpp"
#include "qprof/common/text.hpp"
#include "qprof/record/cgroup.hpp"

namespace qprof::record {
namespace {

namespace fs = std::filesystem;

// Above this a limit is "none": v1 writes PAGE_COUNTER_MAX pages (≈ 2⁶³) for unlimited.
constexpr Bytes kUnlimited = Bytes{1} << 62;

// Every file read here is a few lines (memory.stat, the longest, ≈ 1 KiB).
std::optional<std::string> read_small(const std::string& path) {
  std::string text;
  if (!read_small_file(path, text)) return std::nullopt;
  return text;
}

std::optional<Bytes> to_bytes(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  Bytes v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (r.ec != std::errc() || r.ptr != text.data() + text.size()) return std::nullopt;  // "max", garbage
  return v;
}

// Keeps the tighter of the current answer and a candidate; a later source wins only when tighter.
void consider(std::optional<MemoryLimit>& best, Bytes bytes, const char* source, std::string detail) {
  if (bytes == 0 || bytes >= kUnlimited) return;
  if (!best || bytes < best->bytes) best = MemoryLimit{bytes, source, std::move(detail)};
}

// From the cgroup directory up to the hierarchy's root, `files` at every level.
void walk_up(std::optional<MemoryLimit>& best, const fs::path& root, std::string rel,
             const std::vector<const char*>& files, const char* source) {
  while (!rel.empty() && rel.back() == '/') rel.pop_back();
  fs::path dir = root / fs::path(rel).relative_path();
  std::error_code ec;
  // In a cgroup namespace (a container) the path seen may be missing below the mount: start
  // from the deepest part that exists.
  while (!fs::exists(dir, ec) && dir != root && dir.has_parent_path()) dir = dir.parent_path();
  while (true) {
    for (const char* f : files) {
      if (const auto text = read_small((dir / f).string())) {
        if (const auto b = to_bytes(*text)) consider(best, *b, source, std::string(f) + " of " + dir.string());
      }
    }
    if (dir == root || !dir.has_parent_path() || dir.parent_path() == dir) break;
    dir = dir.parent_path();
  }
}

void cgroup_limits(std::optional<MemoryLimit>& best, const LimitProbe& p) {
  const auto self = read_small(p.proc_root + "/self/cgroup");
  if (!self) return;
  std::string_view rest = *self;
  while (!rest.empty()) {
    const auto line = split_proc_cgroup_line(take_until(rest, '\n'));
    if (!line) continue;
    const std::string_view controllers = line->controllers;
    const std::string path(line->path);
    if (controllers.empty()) {
      // v2: the unified hierarchy (in hybrid mode under unified/, without a memory controller).
      walk_up(best, p.cgroup_root, path, {"memory.max", "memory.high"}, "cgroup");
      continue;
    }
    if (!list_holds(controllers, "memory")) continue;
    const fs::path root = fs::path(p.cgroup_root) / "memory";
    walk_up(best, root, path, {"memory.limit_in_bytes"}, "cgroup-v1");
    // The limit the kernel enforces on the group, its ancestors' included.
    fs::path leaf = root / fs::path(path).relative_path();
    std::error_code ec;
    if (!fs::exists(leaf, ec)) leaf = root;
    if (const auto stat = read_small((leaf / "memory.stat").string())) {
      std::string_view st = *stat;
      while (!st.empty()) {
        std::string_view value = take_until(st, '\n');
        if (take_word(value) != "hierarchical_memory_limit") continue;
        if (const auto v = to_bytes(take_word(value)))
          consider(best, *v, "cgroup-v1", "hierarchical_memory_limit of " + leaf.string());
      }
    }
  }
}

std::optional<Bytes> env_number(const LimitProbe& p, const char* name) {
  const char* v = p.getenv(name);
  if (v == nullptr) return std::nullopt;
  // SLURM_CPUS_PER_TASK and friends can read "4(x2)": the leading number is the one of this node.
  return to_bytes(std::string_view(v).substr(0, std::string_view(v).find_first_not_of("0123456789")));
}

void slurm_limits(std::optional<MemoryLimit>& best, const LimitProbe& p) {
  constexpr Bytes kMiB = Bytes{1} << 20;  // Slurm's "MB" are MiB
  if (const auto node = env_number(p, "SLURM_MEM_PER_NODE")) {
    consider(best, *node * kMiB, "slurm", "SLURM_MEM_PER_NODE=" + std::to_string(*node));
  } else if (const auto per_cpu = env_number(p, "SLURM_MEM_PER_CPU")) {
    const char* cpus_name = "SLURM_CPUS_ON_NODE";
    auto cpus = env_number(p, cpus_name);
    if (!cpus) cpus = env_number(p, cpus_name = "SLURM_CPUS_PER_TASK");
    if (!cpus) cpus = 1, cpus_name = nullptr;
    consider(best, *per_cpu * *cpus * kMiB, "slurm",
             "SLURM_MEM_PER_CPU=" + std::to_string(*per_cpu) +
                 (cpus_name ? " × " + std::string(cpus_name) + "=" + std::to_string(*cpus) : std::string(" × 1 CPU")));
  }
}

}  // namespace

std::optional<MemoryLimit> find_memory_limit(const LimitProbe& p) {
  std::optional<MemoryLimit> best;
  cgroup_limits(best, p);
  slurm_limits(best, p);
  unsigned long long as = 0;
  if (p.rlimit_as) {
    as = *p.rlimit_as;
  } else {
    rlimit r{};
    as = ::getrlimit(RLIMIT_AS, &r) == 0 ? r.rlim_cur : RLIM_INFINITY;
  }
  if (as != RLIM_INFINITY) consider(best, as, "rlimit-as", "RLIMIT_AS (ulimit -v)");
  if (const auto meminfo = read_small(p.proc_root + "/meminfo")) {
    std::string_view rest = *meminfo;
    while (!rest.empty()) {
      std::string_view line = take_until(rest, '\n');  // "MemTotal:       24684092 kB"
      if (take_word(line) != "MemTotal:") continue;
      if (const auto kib = to_bytes(take_word(line)))
        consider(best, *kib * 1024, "memtotal", "MemTotal of " + p.proc_root + "/meminfo");
      break;
    }
  }
  return best;
}

}  // namespace qprof::record
