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
    // Another file of this name: the paths tell them apart. The same file given twice keeps its
    // name (mark_equal_names numbers them): its path would only be longer, not different.
    bool other_file = false;
    for (std::size_t j = 0; j < paths.size() && !other_file; ++j)
      other_file = plain[j] == plain[i] && paths[j] != paths[i];
    if (!labelled && other_file) out[i] = std::string(without_dat_suffix(paths[i]));
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
