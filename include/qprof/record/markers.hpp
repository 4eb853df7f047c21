// Marker lines on the child's stderr become checkpoints; "X Start" … "X End" pairs become stages.
#pragma once

#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "qprof/trace/trace.hpp"

namespace qprof {

inline constexpr std::string_view kDefaultMarkerPrefix = "QPROF_MARK:";
// Only this much of a line is examined: a marker label longer than this is cut.
inline constexpr std::size_t kMarkerScanLimit = 4096;

class MarkerMatcher {
 public:
  // Lines whose text starts (after spaces and tabs) with QPROF_MARK:; the label is the rest.
  MarkerMatcher() = default;
  // A regular expression (ECMAScript) with exactly one capture group, the label; searched in
  // the line. Throws std::invalid_argument with a readable reason otherwise.
  explicit MarkerMatcher(const std::string& regex);

  // The trimmed label if `line` (without its newline) is a marker line.
  std::optional<std::string> match(std::string_view line) const;

 private:
  std::shared_ptr<const std::regex> regex_;
};

// "Calibration Start" → "Calibration"; nullopt unless the label ends in " Start" / " End".
std::optional<std::string_view> stage_start_name(std::string_view label);
std::optional<std::string_view> stage_end_name(std::string_view label);

// Pairs stage labels as they arrive. An "X End" closes the latest open "X Start"; an End with no
// open Start stays a plain checkpoint.
class StageTracker {
 public:
  // Returns the stage this label closes, if it closes one.
  std::optional<Stage> on_marker(std::string_view label, Seconds t, Bytes mem);
  // Stages still open, ending at (t_end, mem_end) and marked not closed.
  std::vector<Stage> unclosed(Seconds t_end, Bytes mem_end) const;

 private:
  struct Open {
    std::string name;
    Seconds t;
    Bytes mem;
  };
  std::vector<Open> open_;
};

}  // namespace qprof
