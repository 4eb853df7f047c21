// SPDX-License-Identifier: Apache-2.0
#include "marker_inbox.hpp"

#include <chrono>
#include <thread>

namespace qprof::session_detail {

void MarkerInbox::post_and_wait(std::string label) {
  std::uint64_t seq;
  {
    std::lock_guard<std::mutex> lock(mu_);
    items_.push_back(PendingMarker{std::move(label), {}, {}});
    seq = ++posted_;
  }
  for (int attempt = 0; attempt < 50 && taken_.load() < seq && !loop_ended_.load(); ++attempt) {
    wake_();
    for (int i = 0; i < 5 && taken_.load() < seq; ++i) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
}

bool MarkerInbox::post(PendingMarker marker) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (items_.size() >= kMaxWaiting) return false;
    items_.push_back(std::move(marker));
    ++posted_;
  }
  wake_();  // the channel's reader sends it again until it is taken
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

}  // namespace qprof::session_detail
