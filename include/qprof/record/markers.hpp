// SPDX-License-Identifier: Apache-2.0
// Marker lines on the child's stderr become checkpoints (their pairing into stages: trace/stages.hpp).
#pragma once

#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <string_view>
#include <vector>


namespace qprof {

inline constexpr std::string_view kDefaultMarkerPrefix = "QPROF_MARK:";
// Only this much of a line is examined: a marker label longer than this is cut.
inline constexpr std::size_t kMarkerScanLimit = 4096;

class MarkerMatcher {
 public:
  // Lines that hold QPROF_MARK: anywhere (after a logging prefix such as INFO:root:); the label
  // is what follows its first occurrence.
  MarkerMatcher() = default;
  // A regular expression (ECMAScript) with exactly one capture group, the label; searched in
  // the line. Throws std::invalid_argument with a readable reason otherwise.
  explicit MarkerMatcher(const std::string& regex);

  // The trimmed label if `line` (without its newline) is a marker line.
  std::optional<std::string> match(std::string_view line) const;

 private:
  std::shared_ptr<const std::regex> regex_;
};

}  // namespace qprof
