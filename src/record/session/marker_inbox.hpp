// SPDX-License-Identifier: Apache-2.0
// Markers travel from the stderr tee's thread and the marker channel's thread to the sampler
// thread, which takes each one's checkpoint at once, in the order they arrived.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "qprof/record/mark_channel.hpp"

namespace qprof::record::session {

class MarkerInbox {
 public:
  // Markers waiting for their checkpoint: beyond this a flooding writer's lines are dropped (the
  // job is never held back by qprof, whichever way its markers come).
  static constexpr std::size_t kMaxWaiting = 256;
  // Once the schedule loop ended, the final take is all that is left: what the pipes still hold
  // is queued for it, up to this (a daemon that floods on stays bounded).
  static constexpr std::size_t kMaxWaitingAtEnd = 16 * kMaxWaiting;
  // Wakes the sampler thread from its sleep; called from the posting threads.
  using Wake = std::function<void()>;

  explicit MarkerInbox(Wake wake) : wake_(std::move(wake)) {}
  MarkerInbox(const MarkerInbox&) = delete;
  MarkerInbox& operator=(const MarkerInbox&) = delete;

  // From the tee's and the channel's readers, which must not block: false when kMaxWaiting
  // markers are waiting (kMaxWaitingAtEnd once the loop ended; the marker is not queued). The sampler is woken, until
  // the loop ended; a wake-up can land just before it sleeps and be lost, so the readers wake it again while markers
  // wait (see waiting()).
  bool post(PendingMarker marker);
  // Markers posted and not yet taken.
  bool waiting() const { return taken_.load() < posted_.load(); }
  // On the sampler thread: each marker waiting, in order, to `checkpoint`; a marker counts as
  // taken once `checkpoint` returned.
  void take(const std::function<void(PendingMarker&)>& checkpoint);
  // After the schedule loop: the last markers wait for the final take, not for a wake-up.
  void end_loop() { loop_ended_ = true; }

 private:
  Wake wake_;
  std::mutex mu_;
  std::vector<PendingMarker> items_;  // guarded by mu_
  std::atomic<std::uint64_t> posted_{0};
  std::atomic<std::uint64_t> taken_{0};
  std::atomic<bool> loop_ended_{false};
};

}  // namespace qprof::record::session
