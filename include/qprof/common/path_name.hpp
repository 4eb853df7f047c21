// SPDX-License-Identifier: Apache-2.0
// The name a path ends in, for matching a watched directory by its short name (`dir:cache` for
// /scratch/run/cache) wherever a metric is looked up: analysis, plot and the exports.
#pragma once

#include <string_view>

namespace qprof {

// The last component of `path`, trailing slashes ignored: "/a/b/" → "b", "cache" → "cache",
// "/" → "/". A view into `path`.
inline std::string_view last_component(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') path.remove_suffix(1);
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos || path.size() == 1 ? path : path.substr(slash + 1);
}

}  // namespace qprof
