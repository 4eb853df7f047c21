// SPDX-License-Identifier: Apache-2.0
// The tree cgroup's memory.stat parts and OOM kill count: read at the stats schedule and once at
// the end, so plain reads of small files.
#include <charconv>
#include <string_view>

#include "qprof/common/proc_file.hpp"
#include "qprof/record/cgroup.hpp"

namespace qprof::record {
std::optional<std::uint64_t> keyed_value(std::string_view text, std::string_view key) {
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (line.size() <= key.size() || line.substr(0, key.size()) != key || line[key.size()] != ' ') continue;
    line.remove_prefix(key.size() + 1);
    std::uint64_t v = 0;
    const auto r = std::from_chars(line.data(), line.data() + line.size(), v);
    if (r.ec == std::errc()) return v;
  }
  return std::nullopt;
}

TreeCgroup::Parts memory_stat_parts(std::string_view text, bool v1) {
  TreeCgroup::Parts p;
  p.anon = keyed_value(text, v1 ? "rss" : "anon");
  p.file = keyed_value(text, v1 ? "cache" : "file");
  p.shmem = keyed_value(text, "shmem");
  return p;
}

TreeCgroup::Parts TreeCgroup::parts() const {
  std::string text;
  if (!read_small_file(dir_ + "/memory.stat", text)) return {};
  return memory_stat_parts(text, v1_);
}

std::optional<std::uint64_t> oom_kills_in(const std::string& dir, bool v1) {
  std::string text;
  if (!read_small_file(dir + (v1 ? "/memory.oom_control" : "/memory.events"), text)) return std::nullopt;
  return keyed_value(text, "oom_kill");
}

std::optional<std::uint64_t> TreeCgroup::oom_kills() const { return oom_kills_in(dir_, v1_); }

}  // namespace qprof::record
