// SPDX-License-Identifier: Apache-2.0
#include "checkpoints.hpp"

#include <algorithm>
#include <tuple>

#include "qprof/record/mark_channel.hpp"

namespace qprof::record::session {
using trace::Marker;
using trace::MemSample;
using trace::Stage;

void Checkpoints::take(MarkerInbox& inbox, Notices& notices) {
  inbox.take([&](PendingMarker& item) { checkpoint(item, notices); });
}

void Checkpoints::checkpoint(PendingMarker& item, Notices& notices) {
  Sampler& sampler = parts_.sampler;
  trace::Writer& out = parts_.trace.writer();
  const std::int64_t now = monotonic_ns();
  const auto s = sampler.sample(now);
  const Seconds t = parts_.clock.unix_at(now);
  // The kernel's peak of the charge up to this marker, exact: a stage between two markers is the
  // union of such windows, its peak theirs, whatever the samples missed. Closed next to the
  // sample, before the PSS pass: the charge read at the marker is then of the window's moment.
  sampler.close_cgroup_window(t);
  if (s) {
    ++samples_;
    parts_.gpu.sample_checkpoint(now, t, parts_.tree, out, notices);
  }
  // PSS has its own slower schedule: a pass of this moment when it is cheap enough, so that the
  // checkpoint's figures are of one moment; otherwise the checkpoint carries the PSS's age.
  if (s) sampler.fresh_pss(kPssBudget);
  stats_pass_(now);
  Marker marker{t, std::move(item.label), {}};
  marker.at.rss = s ? s->bytes : sampler.last().bytes;
  if (const auto pss = sampler.latest_pss()) {
    marker.at.pss = pss->pss;
    marker.at.uss = pss->uss;
    marker.at.pss_age = std::max(0.0, t - pss->t);
  }
  marker.at.read_bytes = sampler.totals().io.read_bytes;
  marker.at.write_bytes = sampler.totals().io.write_bytes;
  marker.at.cpu_seconds = sampler.totals().cpu_seconds;
  if (parts_.gpu.active()) marker.at.gpu_tree = parts_.gpu.tree_total();
  for (const TorchFigure& f : item.torch) out.torch({t, f.device, f.allocated, f.reserved});
  out.mark(t, marker.label);
  parts_.live.set_stage(marker.label);
  if (auto stage = tracker_.on_marker(marker.label, t, *marker.at.rss)) {
    out.func(stage->name, {stage->t_start, stage->mem_start}, {stage->t_end, stage->mem_end});
    stages_.push_back(*stage);
  } else if (const auto name = trace::stage_end_name(marker.label)) {
    note_end_without_start(*name);
  }
  parts_.trace.flush();
  parts_.trace.start_cadence(monotonic_ns());
  // A synchronous checkpoint: its writer waits for this word (at most 100 ms, its side).
  if (!item.reply_path.empty()) send_ack(item.reply_path);
  if (hooks_.on_checkpoint && parts_.trace.intact()) hooks_.on_checkpoint(marker);
}

std::vector<trace::Stage> Checkpoints::finish(Notices& notices) const {
  std::vector<trace::Stage> stages = stages_;
  const MemSample& last = parts_.sampler.last();
  for (const Stage& s : tracker_.unclosed(last.t, last.bytes)) {
    notices.warn("stage '" + s.name + "' was started but never ended");  // the job's text: Notices escapes it
    stages.push_back(s);
  }
  for (const std::string& name : ended_unstarted_) notices.warn("stage '" + name + "' was ended but never started");
  if (more_ended_unstarted_ > 0) {
    notices.warn(std::to_string(more_ended_unstarted_) + " more stages were ended but never started");
  }
  return stages;
}

void Checkpoints::note_end_without_start(std::string_view name) {
  if (std::find(ended_unstarted_.begin(), ended_unstarted_.end(), name) != ended_unstarted_.end()) return;
  if (ended_unstarted_.size() < kEndsWithoutStartNamed) {
    ended_unstarted_.emplace_back(name);
  } else {
    ++more_ended_unstarted_;
  }
}

std::string Checkpoints::stage_at(Seconds t) const {
  std::string name;
  Seconds started = 0;
  if (const auto open = tracker_.innermost_at(t)) std::tie(name, started) = *open;
  for (const trace::Stage& s : stages_) {
    if (s.t_start <= t && t <= s.t_end && (name.empty() || s.t_start > started)) {
      name = s.name;
      started = s.t_start;
    }
  }
  return name;
}

}  // namespace qprof::record::session
