// SPDX-License-Identifier: Apache-2.0
#include "marker_inbox.hpp"

namespace qprof::record::session {

bool MarkerInbox::post(PendingMarker marker) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (items_.size() >= (loop_ended_.load() ? kMaxWaitingAtEnd : kMaxWaiting)) return false;
    items_.push_back(std::move(marker));
    ++posted_;
  }
  if (!loop_ended_.load()) wake_();  // the readers send it again until it is taken
  return true;
}

void MarkerInbox::take(const std::function<void(PendingMarker&)>& checkpoint) {
  if (!waiting()) return;
  std::vector<PendingMarker> items;
  {
    std::lock_guard<std::mutex> lock(mu_);
    items.swap(items_);
  }
  for (PendingMarker& item : items) {
    checkpoint(item);
    ++taken_;
  }
}

}  // namespace qprof::record::session
