// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/trace_label.hpp"

namespace qprof {

std::string_view without_dat_suffix(std::string_view name) {
  constexpr std::string_view kSuffix = ".dat";
  if (name.size() > kSuffix.size() && name.ends_with(kSuffix)) name.remove_suffix(kSuffix.size());
  return name;
}

std::string default_label(std::string_view path) {
  const std::string_view name = without_dat_suffix(path.substr(path.rfind('/') + 1));  // npos + 1 == 0: no folder
  return name.empty() || name == "." || name == ".." ? std::string(path) : std::string(name);
}

}  // namespace qprof
