#include "session_state.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>

namespace qprof::session_detail {

// The longest a marker waits for a fresh PSS pass (GPU queries get as long).
constexpr Seconds kMarkerPssBudget = 0.1;
// Channel markers waiting for their checkpoint: beyond this a flooding writer's lines are dropped.
constexpr std::size_t kMaxQueuedMarkers = 256;

void Session::open_channel() {
  std::string why_not;
  channel_ = MarkChannel::create(why_not);
  if (!channel_) {
    // A qprof around this one must not receive this run's markers.
    ::unsetenv(std::string(kMarkFdVariable).c_str());
    ::unsetenv(std::string(kMarkPathVariable).c_str());
    ::unsetenv(std::string(kMarkFdIdVariable).c_str());
    warn("no marker channel (" + why_not + "): markers come from stderr only");
    return;
  }
  // Set before any thread of qprof's starts, so that no getenv races with it.
  ::setenv(std::string(kMarkFdVariable).c_str(), std::to_string(channel_->write_fd()).c_str(), 1);
  ::setenv(std::string(kMarkFdIdVariable).c_str(), channel_->write_fd_id().c_str(), 1);
  ::setenv(std::string(kMarkPathVariable).c_str(), channel_->fifo_path().c_str(), 1);
}

bool Session::post_channel_marker(PendingMarker marker) {
  {
    std::lock_guard<std::mutex> lock(inbox_.mu);
    if (inbox_.items.size() >= kMaxQueuedMarkers) return false;
    inbox_.items.push_back(std::move(marker));
    ++inbox_.posted;
  }
  SignalRelay::wake(sampler_thread_);  // the channel's reader sends it again until it is taken
  return true;
}

void Session::channel_notes() {
  if (!channel_ || channel_->dropped() == channel_dropped_noted_) return;
  if (channel_dropped_noted_ == 0) {
    warn("the marker channel is flooded: markers beyond " + std::to_string(kMaxQueuedMarkers) +
         " waiting for their checkpoint are dropped");
  }
  channel_dropped_noted_ = channel_->dropped();
}

void Session::post_marker(std::string label) {
  std::uint64_t seq;
  {
    std::lock_guard<std::mutex> lock(inbox_.mu);
    inbox_.items.push_back(PendingMarker{std::move(label), {}, {}});
    seq = ++inbox_.posted;
  }
  // The wake-up can land just before the sampler goes to sleep and be lost; send it again until
  // the marker is taken (bounded: the regular schedule takes it anyway).
  for (int attempt = 0; attempt < 50 && inbox_.taken.load() < seq && !inbox_.loop_ended.load(); ++attempt) {
    SignalRelay::wake(sampler_thread_);
    for (int i = 0; i < 5 && inbox_.taken.load() < seq; ++i) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
}

void Session::take_markers() {
  channel_notes();
  if (inbox_.taken.load() == inbox_.posted.load()) return;
  std::vector<PendingMarker> items;
  {
    std::lock_guard<std::mutex> lock(inbox_.mu);
    items.swap(inbox_.items);
  }
  for (PendingMarker& item : items) {
    std::string& label = item.label;
    const std::int64_t now = monotonic_ns();
    const auto s = sampler_->sample(now);
    const Seconds t = clock_->unix_at(now);
    if (s) {
      ++report_.marker_samples;
      if (gpu_) {
        gpu_->sample_checkpoint(now, t, tree_->pids(), *out_);
        gpu_sample_warnings();
      }
    }
    // PSS has its own slower schedule: a pass of this moment when it is cheap enough, so that the
    // checkpoint's figures are of one moment; otherwise the checkpoint carries the PSS's age.
    if (s) sampler_->fresh_pss(kMarkerPssBudget);
    stats_sample(now);
    Marker marker{t, std::move(label), {}};
    marker.at.rss = s ? s->bytes : sampler_->last().bytes;
    if (const auto pss = sampler_->latest_pss()) {
      marker.at.pss = pss->pss;
      marker.at.uss = pss->uss;
      marker.at.pss_age = std::max(0.0, t - pss->t);
    }
    marker.at.read_bytes = sampler_->totals().io.read_bytes;
    marker.at.write_bytes = sampler_->totals().io.write_bytes;
    marker.at.cpu_seconds = sampler_->totals().cpu_seconds;
    if (gpu_) marker.at.gpu_tree = gpu_->last_tree_total();
    for (const TorchFigure& f : item.torch) out_->torch({t, f.device, f.allocated, f.reserved});
    out_->mark(t, marker.label);
    if (live_) live_stage_ = marker.label;
    if (auto stage = stages_.on_marker(marker.label, t, *marker.at.rss)) {
      out_->func(stage->name, {stage->t_start, stage->mem_start}, {stage->t_end, stage->mem_end});
      report_.stages.push_back(*stage);
    }
    flush_trace();
    last_flush_ns_ = monotonic_ns();
    // A synchronous checkpoint: its writer waits for this word (at most 100 ms, its side).
    if (!item.reply_path.empty()) send_ack(item.reply_path);
    if (hooks_.on_checkpoint && trace_intact()) hooks_.on_checkpoint(marker);
    ++inbox_.taken;
  }
}

}  // namespace qprof::session_detail
