// SPDX-License-Identifier: Apache-2.0
// What a job's traces say of themselves before they are summed: a rank given twice, traces of
// several jobs, a world size other than the traces given, footprints of two kinds.
#include <map>
#include <set>
#include <tuple>

#include "qprof/analysis/job.hpp"

namespace qprof::analysis {
using trace::Trace;

std::optional<std::string> repeated_rank(const std::vector<const Trace*>& traces) {
  std::map<std::tuple<std::string, std::string, std::int64_t>, const Trace*> seen;
  for (const Trace* t : traces) {
    if (!t->meta.job.rank) continue;
    const auto [it, fresh] = seen.try_emplace({t->meta.job.job_id, t->meta.host, *t->meta.job.rank}, t);
    if (fresh) continue;
    return rank_label(*t) + " is given twice (" + it->second->source + " and " + t->source +
           "): its memory would count twice in the sum; give each rank once";
  }
  return std::nullopt;
}

std::optional<std::string> several_jobs_note(const std::vector<const Trace*>& traces) {
  std::set<std::string> ids;
  for (const Trace* t : traces) {
    if (!t->meta.job.job_id.empty()) ids.insert(t->meta.job.job_id);
  }
  if (ids.size() < 2) return std::nullopt;
  std::string list;
  for (const std::string& id : ids) list += (list.empty() ? "" : ", ") + id;
  return "traces of " + std::to_string(ids.size()) + " jobs (ids " + list +
         ") are summed as one: right only if they ran together on the same hosts";
}

std::optional<std::string> world_size_note(const std::vector<const Trace*>& traces) {
  const auto world = traces.empty() ? std::nullopt : traces.front()->meta.job.world_size;
  if (!world || static_cast<std::size_t>(*world) == traces.size()) return std::nullopt;
  const std::string said = "the world size is " + std::to_string(*world) + " but " + std::to_string(traces.size()) +
                           (traces.size() == 1 ? " trace was given" : " traces were given");
  if (static_cast<std::size_t>(*world) > traces.size()) return said + ": the sum misses ranks";
  return said + ": more than the job's ranks (traces of another job or run?)";
}

std::optional<std::string> mixed_footprint_note(const std::vector<const Trace*>& traces) {
  if (job_footprint_metric(traces, Metric::footprint) != Metric::pss) return std::nullopt;
  std::string charged;
  std::size_t n = 0;
  for (const Trace* t : traces) {
    if (t->cgroup.empty() || ++n > 3) continue;
    charged += (charged.empty() ? "" : ", ") + rank_label(*t);
  }
  if (n == 0) return std::nullopt;
  if (n > 3) charged += " and " + std::to_string(n - 3) + " more";
  return "the ranks' footprints are of two kinds (" + charged + ": a cgroup's charge; the others: Σ PSS): the job's " +
         "footprint adds every rank's Σ PSS, like for like, which leaves out the page cache a charge holds";
}

}  // namespace qprof::analysis
