// SPDX-License-Identifier: Apache-2.0
// A marker's checkpoint: the tree (and its GPU memory) sampled at once, a stats pass, the MARK
// line with torch's figures, the stage the marker opens or closes, the trace flushed; then a
// synchronous marker's writer is acknowledged and the on_checkpoint hook told.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpu_sampling.hpp"
#include "live_view.hpp"
#include "marker_inbox.hpp"
#include "notices.hpp"
#include "qprof/common/clock.hpp"
#include "qprof/record/sampler.hpp"
#include "qprof/record/session.hpp"
#include "qprof/trace/stages.hpp"
#include "trace_sink.hpp"

namespace qprof::record::session {

class Checkpoints {
 public:
  // The longest a marker waits for a fresh PSS pass (GPU queries get as long).
  static constexpr Seconds kPssBudget = 0.1;

  // What a checkpoint samples and where it writes; all outlive it.
  struct Parts {
    Sampler& sampler;
    const WallAnchor& clock;
    ProcTree& tree;
    GpuSampling& gpu;
    TraceSink& trace;
    LiveView& live;
  };
  using StatsPass = std::function<void(std::int64_t now)>;

  Checkpoints(Parts parts, const RunHooks& hooks, StatsPass stats_pass)
      : parts_(parts), hooks_(hooks), stats_pass_(std::move(stats_pass)) {}

  // Every marker waiting in `inbox`, in the order they arrived.
  void take(MarkerInbox& inbox, Notices& notices);
  // Every stage of the run: the closed ones, then those never ended, closed at the last sample
  // and said; an End that closed no stage is said too.
  std::vector<trace::Stage> finish(Notices& notices) const;
  // Checkpoints that sampled the tree (it was not empty).
  std::uint64_t samples() const { return samples_; }
  // The innermost stage open now ("" none).
  std::string open_stage() const { return tracker_.innermost(); }
  // The innermost stage open at `t` (the latest started of those that held it; "" none): an
  // event found after its markers were taken still gets the stage it happened in.
  std::string stage_at(Seconds t) const;

 private:
  void checkpoint(PendingMarker& item, Notices& notices);
  void note_end_without_start(std::string_view name);

  // Ends without a Start named in the warnings, each once; past these they are counted (a job
  // printing a new name each time cannot make the list grow).
  static constexpr std::size_t kEndsWithoutStartNamed = 16;

  Parts parts_;
  const RunHooks& hooks_;
  StatsPass stats_pass_;
  trace::StageTracker tracker_;
  std::vector<trace::Stage> stages_;          // closed, as the markers closed them
  std::uint64_t samples_ = 0;                 // checkpoints that sampled the tree (it was not empty)
  std::vector<std::string> ended_unstarted_;  // the names of Ends that closed no stage, first seen first
  std::uint64_t more_ended_unstarted_ = 0;    // further such names, beyond kEndsWithoutStartNamed
};

}  // namespace qprof::record::session
