// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/trace_label.hpp"

namespace qprof {

std::string default_label(std::string_view path) {
  constexpr std::string_view kSuffix = ".dat";
  std::string_view name = path.substr(path.rfind('/') + 1);  // npos + 1 == 0: no folder
  if (name.size() > kSuffix.size() && name.ends_with(kSuffix)) name.remove_suffix(kSuffix.size());
  return name.empty() || name == "." || name == ".." ? std::string(path) : std::string(name);
}

}  // namespace qprof
