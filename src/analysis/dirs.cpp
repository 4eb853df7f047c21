// SPDX-License-Identifier: Apache-2.0
// Watched directories (--watch-dir, DIR lines) as metrics and growths, and the memory limit the
// header recorded.
#include <algorithm>
#include <charconv>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "qprof/analysis/metric.hpp"
#include "qprof/analysis/dirs.hpp"
#include "qprof/analysis/metric_table.hpp"
#include "qprof/common/path_name.hpp"
#include "qprof/common/units.hpp"
#include "series.hpp"

namespace qprof::analysis {
using trace::DirSample;
using trace::Trace;
using trace::WatchedDir;

namespace {

// dir:NAME metrics are of kind dir, their index a slot of this registry, which keeps their names
// and infos at stable addresses (a deque never moves its elements).
struct DirRegistry {
  std::mutex mu;
  std::deque<std::string> names;   // NAME
  std::deque<std::string> keys;    // "dir:NAME"
  std::deque<std::string> titles;  // "dir NAME"
  std::deque<MetricInfo> infos;
  // NAME → its position: a trace of many directories registers each once, without a search.
  std::unordered_map<std::string, std::size_t> by_name;
};

DirRegistry& registry() {
  static DirRegistry r;
  return r;
}

}  // namespace

Metric dir_metric(std::string_view name) {
  DirRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const auto [it, added] = r.by_name.try_emplace(std::string(name), r.names.size());
  if (!added) return Metric{MetricKind::dir, static_cast<std::uint32_t>(it->second)};
  r.names.emplace_back(name);
  r.keys.push_back("dir:" + std::string(name));
  r.titles.push_back("dir " + std::string(name));
  const Metric m{MetricKind::dir, static_cast<std::uint32_t>(r.names.size() - 1)};
  const MetricInfo& row = metric_row(MetricKind::dir).info;
  r.infos.push_back(MetricInfo{m, r.keys.back(), r.titles.back(), row.what, row.windowed});
  return m;
}

namespace detail {

const MetricInfo* dir_metric_info(Metric m, std::string* name) {
  if (m.kind != MetricKind::dir) return nullptr;
  DirRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  const std::size_t i = m.index;
  if (i >= r.infos.size()) return nullptr;
  if (name) *name = r.names[i];
  return &r.infos[i];
}

}  // namespace detail

const WatchedDir* find_watched_dir(const Trace& t, std::string_view name) {
  for (const WatchedDir& d : t.dirs) {
    if (d.path == name) return &d;
  }
  for (const WatchedDir& d : t.dirs) {
    if (last_component(d.path) == name) return &d;
  }
  return nullptr;
}

namespace {

// How many of the trace's directories share each last component: dir_name for all of them in
// one pass, not one pass over the directories per directory.
std::unordered_map<std::string_view, std::size_t> base_counts(const Trace& t) {
  std::unordered_map<std::string_view, std::size_t> counts;
  std::unordered_set<int> seen;  // a repeated DIRDEF is one directory
  for (const WatchedDir& d : t.dirs) {
    if (seen.insert(d.index).second) ++counts[last_component(d.path)];
  }
  return counts;
}

std::string dir_name(const WatchedDir& d, const std::unordered_map<std::string_view, std::size_t>& counts) {
  const std::string_view base = last_component(d.path);
  const auto it = counts.find(base);
  return it != counts.end() && it->second > 1 ? d.path : std::string(base);
}

}  // namespace

std::string dir_name(const Trace& t, const WatchedDir& d) {
  const std::string_view base = last_component(d.path);
  for (const WatchedDir& other : t.dirs) {
    if (other.index != d.index && last_component(other.path) == base) return d.path;
  }
  return std::string(base);
}

std::vector<DirGrowth> dir_growths(const Trace& t) {
  // One pass over the samples, each found its directory by index: linear in the trace, whatever
  // the number of directories (a search per sample was quadratic: 100 000 DIR lines took minutes).
  std::vector<DirGrowth> out;
  std::unordered_map<int, std::size_t> slot;
  const auto counts = base_counts(t);
  for (const WatchedDir& d : t.dirs) {
    if (!slot.try_emplace(d.index, out.size()).second) continue;  // a repeated index: its first DIRDEF
    DirGrowth g;
    g.dir = d;
    g.name = dir_name(d, counts);
    out.push_back(std::move(g));
  }
  for (const DirSample& s : t.dir_samples) {
    const auto it = slot.find(s.dir);
    if (it == slot.end()) continue;
    DirGrowth& g = out[it->second];
    if (g.samples++ == 0) g.start = s.apparent, g.fs_free_min = s.fs_free;
    if (s.apparent > g.peak || g.samples == 1) g.peak = s.apparent, g.peak_t = s.t;
    g.last = s.apparent;
    g.allocated_peak = std::max(g.allocated_peak, s.allocated);
    g.fs_free_min = std::min(g.fs_free_min, s.fs_free);
  }
  if (t.reduced) {  // its samples are those the figures come from: the file's count
    for (DirGrowth& g : out) {
      const auto it = t.reduced->dir_samples.find(g.dir.index);
      if (g.samples > 0 && it != t.reduced->dir_samples.end()) g.samples = it->second;
    }
  }
  std::erase_if(out, [](const DirGrowth& g) { return g.samples == 0; });
  for (DirGrowth& g : out) g.growth = g.peak > g.start ? g.peak - g.start : 0;
  return out;
}

std::optional<Bytes> peak_dir_growth(const Trace& t) {
  std::optional<Bytes> best;
  for (const DirGrowth& g : dir_growths(t)) best = std::max(best.value_or(0), g.growth);
  return best;
}

std::optional<LimitInfo> memory_limit(const Trace& t) {
  const auto it = t.meta.other.find("limit");
  if (it == t.meta.other.end()) return std::nullopt;
  LimitInfo l;
  const std::string& v = it->second;
  const auto r = std::from_chars(v.data(), v.data() + v.size(), l.bytes);
  if (r.ec != std::errc() || r.ptr != v.data() + v.size() || l.bytes == 0) return std::nullopt;
  const auto src = t.meta.other.find("limit_source");
  l.source = src == t.meta.other.end() ? "unknown" : src->second;
  return l;
}

std::optional<double> parse_percent(std::string_view text) {
  if (text.size() < 2 || text.back() != '%') return std::nullopt;
  double v = 0;
  const std::string_view num = text.substr(0, text.size() - 1);
  const auto r = std::from_chars(num.data(), num.data() + num.size(), v);
  if (r.ec != std::errc() || r.ptr != num.data() + num.size() || !(v > 0) || v > 1000) return std::nullopt;
  return v / 100.0;
}

Result<Bytes> budget_bytes(std::string_view text, const Trace& t) {
  if (const auto share = parse_percent(text)) {
    const auto limit = memory_limit(t);
    if (!limit) {
      return Failure{"--max-peak " + std::string(text) + ": the trace " + t.source +
                     " records no memory limit (recorded by an older qprof, or by mprof): give a size instead"};
    }
    return bytes_from_double(*share * static_cast<double>(limit->bytes));
  }
  if (const auto size = parse_size(text)) return *size;
  return Failure{"--max-peak: '" + std::string(text) + "' is neither a size nor a percentage of the limit"};
}

}  // namespace qprof::analysis
