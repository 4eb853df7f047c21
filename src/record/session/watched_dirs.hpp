// SPDX-License-Identifier: Apache-2.0
// --watch-dir: the directories' sizes walked on their own thread from before the launch (the
// first walk is every growth's baseline), written as DIR lines as they come, and each
// directory's first, largest and last size in the report.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "notices.hpp"
#include "qprof/common/clock.hpp"
#include "qprof/record/dir_watch.hpp"
#include "qprof/record/session.hpp"

namespace qprof::record::session {

class WatchedDirs {
 public:
  WatchedDirs(std::vector<std::string> paths, Seconds interval);
  WatchedDirs(const WatchedDirs&) = delete;
  WatchedDirs& operator=(const WatchedDirs&) = delete;

  // The first walk starts (nothing without directories).
  void start(const WallAnchor& clock);
  // The DIRDEF lines, after the header.
  void write_definitions(trace::Writer& out) const;
  // The walks finished since the last call: DIR lines and the directories' figures.
  void drain(trace::Writer& out, Notices& notices);
  // Stops the walks, drains the last, and hands every figure to `report`.
  WatchReport finish(trace::Writer& out, Notices& notices);

 private:
  std::vector<std::string> paths_;
  Seconds interval_;
  std::vector<WatchReport::Dir> dirs_;
  std::unique_ptr<DirWatcher> watcher_;
};

}  // namespace qprof::record::session
