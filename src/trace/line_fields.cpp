// SPDX-License-Identifier: Apache-2.0
#include "line_fields.hpp"

namespace qprof::trace::detail {

std::string quoted(std::string_view s) {
  constexpr std::size_t kShown = 60;
  std::string out = "'";
  out += escape_text(s.substr(0, kShown));
  if (s.size() > kShown) out += "…";
  out += "'";
  return out;
}

}  // namespace qprof::trace::detail
