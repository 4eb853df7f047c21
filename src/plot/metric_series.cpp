// SPDX-License-Identifier: Apache-2.0
// Which series of a reduced trace `--metric NAME` draws.
#include <string_view>

#include "qprof/common/path_name.hpp"
#include "qprof/plot/reduce.hpp"

namespace qprof::plot {
namespace {

// As analysis's find_watched_dir: the path itself, else the last component.
const Series* dir_series_of(const TraceData& t, std::string_view name) {
  for (const DirData& d : t.dirs) {
    if (d.info.path == name) return &d.apparent;
  }
  for (const DirData& d : t.dirs) {
    if (last_component(d.info.path) == name) return &d.apparent;
  }
  return nullptr;
}

const Series* named_series_of(const TraceData& t, std::string_view metric) {
  struct Named {
    std::string_view name;
    Series TraceData::*series;
  };
  static constexpr Named kSeries[] = {
      {"rss", &TraceData::mem},       {"pss", &TraceData::pss},       {"uss", &TraceData::uss},
      {"gpu", &TraceData::gpu_total}, {"cgroup", &TraceData::cgroup}, {"anon", &TraceData::anon},
      {"file", &TraceData::file},     {"shmem", &TraceData::shmem},   {"swap", &TraceData::swap},
  };
  for (const Named& n : kSeries) {
    if (n.name == metric) return &(t.*n.series);
  }
  // The footprint's basis, as trace/footprint.hpp chooses it: the tree's own cgroup, else Σ PSS.
  if (metric == "footprint") return t.cgroup.empty() ? &t.pss : &t.cgroup;
  if (metric == "unreclaimable") return t.cgroup.empty() ? &t.pss_unreclaimable : &t.cgroup_unreclaimable;
  if (metric.substr(0, 4) == "dir:") return dir_series_of(t, metric.substr(4));
  return nullptr;
}

}  // namespace

const Series* metric_series_of(const TraceData& t, std::string_view metric) {
  const Series* s = named_series_of(t, metric);
  return s && !s->empty() ? s : nullptr;
}

}  // namespace qprof::plot
