// SPDX-License-Identifier: Apache-2.0
#include "watched_dirs.hpp"

#include <algorithm>

namespace qprof::record::session {
using trace::DirSample;
using trace::WatchedDir;

WatchedDirs::WatchedDirs(std::vector<std::string> paths, Seconds interval)
    : paths_(std::move(paths)), interval_(interval) {
  for (const std::string& d : paths_) dirs_.push_back({d});
}

void WatchedDirs::start(const WallAnchor& clock) {
  if (paths_.empty()) return;
  watcher_ = std::make_unique<DirWatcher>(paths_, interval_, clock);
}

void WatchedDirs::write_definitions(trace::Writer& out) const {
  for (std::size_t i = 0; i < paths_.size(); ++i) out.dir_def(WatchedDir{static_cast<int>(i), paths_[i]});
}

void WatchedDirs::drain(trace::Writer& out, Notices& notices) {
  if (!watcher_) return;
  watcher_->drain([&](const DirSample& s) {
    out.dir(s);
    RunReport::WatchedDirReport& d = dirs_[static_cast<std::size_t>(s.dir)];
    if (!d.seen) d.start = s.apparent, d.fs_free_min = s.fs_free;
    d.seen = true;
    d.peak = std::max(d.peak, s.apparent);
    d.last = s.apparent;
    d.fs_free_min = std::min(d.fs_free_min, s.fs_free);
  });
  if (watcher_->has_warnings()) {
    for (const std::string& w : watcher_->take_warnings()) notices.warn(w);
  }
}

void WatchedDirs::finish(trace::Writer& out, Notices& notices, RunReport& report) {
  if (!watcher_) return;
  watcher_->stop();
  drain(out, notices);
  report.dirs = dirs_;
  report.dir_asked_interval = interval_;
  const DirWatcher::Stats s = watcher_->stats();
  report.dir_walks = s.walks;
  report.dir_mean_interval = s.mean_interval;
  report.dir_cpu_seconds = s.cpu_seconds;
  report.dir_cpu_share = s.cpu_share();
  report.dir_first_walk_cpu = s.first_walk_cpu;
  report.dir_entries = s.last_entries;
}

}  // namespace qprof::record::session
