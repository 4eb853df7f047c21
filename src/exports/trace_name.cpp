// SPDX-License-Identifier: Apache-2.0
#include "trace_name.hpp"

#include "qprof/analysis/job.hpp"
#include "qprof/common/trace_label.hpp"

namespace qprof::exports {

std::vector<std::string> trace_names(const std::vector<Input>& inputs, const std::vector<TraceIdentity>& ids) {
  std::vector<std::string> paths, labels;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    paths.push_back(inputs[i].path);
    labels.push_back(i < ids.size() ? analysis::given_or_rank_label(inputs[i].label, ids[i].rank, ids[i].host)
                                    : inputs[i].label);
  }
  std::vector<std::string> names = qprof::trace_names(paths, labels);
  mark_equal_names(names);
  return names;
}

}  // namespace qprof::exports
