// SPDX-License-Identifier: Apache-2.0
// Marker lines on the child's stderr become checkpoints (their pairing into stages: trace/stages.hpp).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qprof/common/failure.hpp"

namespace qprof::record {

inline constexpr std::string_view kDefaultMarkerPrefix = "QPROF_MARK:";
// The marker channel's lines (one write(2) of at most PIPE_BUF bytes): a longer line is cut.
inline constexpr std::size_t kMarkerScanLimit = 4096;
// A marker label from stderr is at most this long: a longer one is cut there, and counted.
inline constexpr std::size_t kMarkerLabelLimit = 4096;
// --marker-regex sees whole lines of stderr up to this long: a longer line is counted, not searched
// (the default rule finds its marker text in a line of any length).
inline constexpr std::size_t kMarkerLineLimit = 1 << 16;
// The steps (PCRE2's match limit) --marker-regex may take on one line: a pattern that backtracks
// catastrophically gives up on that line (it is no marker) in about a millisecond, instead of
// holding the job's stderr for minutes; a sane pattern needs a few hundred.
inline constexpr std::uint32_t kMarkerMatchSteps = 100000;

class MarkerMatcher {
 public:
  // Lines that hold QPROF_MARK: anywhere (after a logging prefix such as INFO:root:); the label
  // is what follows its first occurrence.
  MarkerMatcher() = default;
  // A regular expression (PCRE2, Perl's syntax) with exactly one capture group, the label;
  // searched in the line, run within kMarkerMatchSteps. A Failure with a readable reason
  // otherwise.
  static Result<MarkerMatcher> compile(const std::string& regex);

  // The trimmed label if `line` (without its newline) is a marker line.
  std::optional<std::string> match(std::string_view line) const;
  // The default rule (no --marker-regex): what follows kDefaultMarkerPrefix.
  bool by_prefix() const { return !regex_; }
  // Lines on which the pattern gave up (its step bound): counted, not markers.
  std::uint64_t gave_up() const;

  struct Compiled;

 private:
  std::shared_ptr<Compiled> regex_;
};

}  // namespace qprof::record
