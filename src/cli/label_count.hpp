// SPDX-License-Identifier: Apache-2.0
// More --label values than what they name (plot, export, compare): said with the count in words,
// and why it may be so: a comma splits one --label into several.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace qprof::cli {

inline std::optional<std::string> too_many_labels(std::size_t labels, std::size_t named, const std::string& what) {
  if (labels <= named) return std::nullopt;
  return std::to_string(labels) + " labels (--label) for " + std::to_string(named) + " " + what +
         (named == 1 ? "" : "s") + " (a comma splits a --label into two: one --label per " + what +
         ", with no comma in it)";
}

}  // namespace qprof::cli
