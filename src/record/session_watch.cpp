// The memory limit in force and the watched directories: what the run adds to the trace besides
// the tree's own figures.
#include <algorithm>
#include <iomanip>
#include <sstream>

#include "qprof/common/units.hpp"
#include "qprof/record/limit.hpp"
#include "session_state.hpp"

namespace qprof::session_detail {
namespace {

constexpr double kLimitWarnShare = 0.9;  // the tree's RSS at 90 % of the limit: said once

}  // namespace

void Session::find_limit(TraceMeta& meta) {
  LimitProbe probe;
  probe.proc_root = o_.proc_root;
  const auto limit = find_memory_limit(probe);
  if (!limit) return;
  report_.limit = limit->bytes;
  report_.limit_source = limit->source;
  report_.limit_detail = limit->detail;
  meta.other["limit"] = std::to_string(limit->bytes);
  meta.other["limit_source"] = limit->source;
}

void Session::check_limit(Bytes tree_rss) {
  if (!report_.limit || report_.limit_warned) return;
  // On the basis the limit counts: a cgroup, Slurm or the machine's memory count a page shared
  // by forked workers once (the footprint, as of the latest stats pass), not once per process.
  const std::optional<Bytes> footprint = sampler_->footprint_now();
  const Bytes figure = footprint ? *footprint : tree_rss;
  if (static_cast<double>(figure) < kLimitWarnShare * static_cast<double>(*report_.limit)) return;
  report_.limit_warned = true;
  std::ostringstream text;
  text << (footprint ? "the tree's footprint (" : "the tree's RSS (") << human_bytes(figure) << ") crossed 90 % of the "
       << report_.limit_source << " limit of "
       << human_bytes(*report_.limit) << " (" << report_.limit_detail << ")";
  warn(text.str());
}

void Session::start_watch() {
  if (o_.watch_dirs.empty()) return;
  report_.dir_asked_interval = o_.watch_interval;
  for (const std::string& d : o_.watch_dirs) report_.dirs.push_back({d});
  dir_watch_ = std::make_unique<DirWatcher>(o_.watch_dirs, o_.watch_interval, *clock_);
}

void Session::write_watch_defs() {
  for (std::size_t i = 0; i < o_.watch_dirs.size(); ++i) out_->dir_def(WatchedDir{static_cast<int>(i), o_.watch_dirs[i]});
}

void Session::drain_watch() {
  if (!dir_watch_) return;
  dir_watch_->drain([this](const DirSample& s) {
    out_->dir(s);
    RunReport::WatchedDirReport& d = report_.dirs[static_cast<std::size_t>(s.dir)];
    if (!d.seen) d.start = s.apparent, d.fs_free_min = s.fs_free;
    d.seen = true;
    d.peak = std::max(d.peak, s.apparent);
    d.last = s.apparent;
    d.fs_free_min = std::min(d.fs_free_min, s.fs_free);
  });
  if (dir_watch_->has_warnings()) {
    for (const std::string& w : dir_watch_->take_warnings()) warn(w);
  }
}

void Session::finish_watch() {
  if (!dir_watch_) return;
  dir_watch_->stop();
  drain_watch();
  const DirWatcher::Stats s = dir_watch_->stats();
  report_.dir_walks = s.walks;
  report_.dir_mean_interval = s.mean_interval;
  report_.dir_cpu_seconds = s.cpu_seconds;
  report_.dir_cpu_share = s.cpu_share();
  report_.dir_first_walk_cpu = s.first_walk_cpu;
  report_.dir_entries = s.last_entries;
}

}  // namespace qprof::session_detail
