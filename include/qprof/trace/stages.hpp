// SPDX-License-Identifier: Apache-2.0
// Marker labels "X Start" … "X End" pair into stages. This is the trace's own meaning of its MARK
// lines, shared by the recorder (live), the trace builder and the plot reducer (reading).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "qprof/trace/trace.hpp"

namespace qprof::trace {

// "Calibration Start" → "Calibration"; nullopt unless the label ends in " Start" / " End".
std::optional<std::string_view> stage_start_name(std::string_view label);
std::optional<std::string_view> stage_end_name(std::string_view label);

// Where a stage left open ends: the trace's end, its EXIT record's time where it has one (the
// figures read at the end, an OOM kill's last charge among them, are the stage's), else its last
// sample or marker, whichever is later.
inline Seconds open_stage_end(Seconds last_sample, std::optional<Seconds> last_marker, std::optional<Seconds> exit) {
  Seconds end = last_sample;
  if (last_marker && *last_marker > end) end = *last_marker;
  if (exit && *exit > end) end = *exit;
  return end;
}

// Pairs stage labels as they arrive. An "X End" closes the latest open "X Start"; an End with no
// open Start stays a plain checkpoint.
class StageTracker {
 public:
  // Returns the stage this label closes, if it closes one.
  std::optional<Stage> on_marker(std::string_view label, Seconds t, Bytes mem);
  // Stages still open, ending at (t_end, mem_end) and marked not closed. A reader passes the
  // trace's end (open_stage_end): a stage left open runs to it, where an OOM kill often comes.
  std::vector<Stage> unclosed(Seconds t_end, Bytes mem_end) const;
  // The latest stage started and not yet ended ("" none).
  std::string innermost() const { return open_.empty() ? std::string() : open_.back().name; }
  // The latest stage still open that started at or before `t`, with its start (nullopt none).
  std::optional<std::pair<std::string, Seconds>> innermost_at(Seconds t) const;

 private:
  struct Open {
    std::string name;
    Seconds t;
    Bytes mem;
  };
  std::vector<Open> open_;
};

}  // namespace qprof::trace
