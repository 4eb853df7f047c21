// SPDX-License-Identifier: Apache-2.0
#include "trace_name.hpp"

#include "qprof/analysis/job.hpp"
#include "qprof/common/trace_label.hpp"

namespace qprof::exports {

std::string trace_name(const Input& in, std::optional<std::int64_t> rank, const std::string& host) {
  if (!in.label.empty()) return in.label;
  if (rank) return analysis::rank_label(*rank, host);
  return default_label(in.path);
}

}  // namespace qprof::exports
