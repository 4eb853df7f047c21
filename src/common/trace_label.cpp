// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/trace_label.hpp"

#include <algorithm>
#include <map>

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

std::vector<std::string> trace_names(const std::vector<std::string>& paths, const std::vector<std::string>& labels) {
  std::vector<std::string> plain;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const bool labelled = i < labels.size() && !labels[i].empty();
    plain.push_back(labelled ? labels[i] : default_label(paths[i]));
  }
  std::vector<std::string> out = plain;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    const bool labelled = i < labels.size() && !labels[i].empty();
    const bool shared = std::count(plain.begin(), plain.end(), plain[i]) > 1;
    if (!labelled && shared) out[i] = std::string(without_dat_suffix(paths[i]));
  }
  return out;
}

void mark_equal_names(std::vector<std::string>& names, const NameFit& fit) {
  std::map<std::string, int> seen;
  for (const std::string& s : names) ++seen[s];
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (seen[names[i]] < 2) continue;
    const std::string mark = " #" + std::to_string(i + 1);
    names[i] = (fit ? fit(names[i], mark.size()) : names[i]) + mark;
  }
}

}  // namespace qprof
