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
    WatchReport::Dir& d = dirs_[static_cast<std::size_t>(s.dir)];
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

WatchReport WatchedDirs::finish(trace::Writer& out, Notices& notices) {
  WatchReport report;
  if (!watcher_) return report;
  watcher_->stop();
  drain(out, notices);
  report.dirs = dirs_;
  report.asked_interval = interval_;
  const DirWatcher::Stats s = watcher_->stats();
  report.walks = s.walks;
  report.mean_interval = s.mean_interval;
  report.cpu_seconds = s.cpu_seconds;
  report.cpu_share = s.cpu_share();
  report.first_walk_cpu = s.first_walk_cpu;
  report.entries = s.last_entries;
  return report;
}

}  // namespace qprof::record::session
