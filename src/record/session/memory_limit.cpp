// SPDX-License-Identifier: Apache-2.0
#include "memory_limit.hpp"

#include <sstream>

#include "qprof/common/units.hpp"

namespace qprof::record::session {
using trace::TraceMeta;

void MemoryLimitWatch::find(const std::string& proc_root, TraceMeta& meta) {
  LimitProbe probe;
  probe.proc_root = proc_root;
  // --mem's limit, set before: kept unless one around qprof is tighter still.
  const std::optional<MemoryLimit> imposed = std::move(limit_);
  limit_ = find_memory_limit(probe);
  if (imposed && (!limit_ || imposed->bytes <= limit_->bytes)) limit_ = imposed;
  if (!limit_) return;
  meta.other["limit"] = std::to_string(limit_->bytes);
  meta.other["limit_source"] = limit_->source;
}

void MemoryLimitWatch::check(Bytes tree_rss, Notices& notices, std::optional<Bytes> footprint) {
  if (!limit_ || warned_) return;
  const Bytes figure = footprint ? *footprint : tree_rss;
  if (static_cast<double>(figure) < kWarnShare * static_cast<double>(limit_->bytes)) return;
  warned_ = true;
  std::ostringstream text;
  text << (footprint ? "the tree's footprint (" : "the tree's RSS (") << human_bytes(figure) << ") crossed 90 % of the "
       << limit_->source << " limit of " << human_bytes(limit_->bytes) << " (" << limit_->detail << ")";
  notices.warn(text.str());
}

LimitReport MemoryLimitWatch::report() const {
  if (!limit_) return {};
  return LimitReport{limit_->bytes, limit_->source, limit_->detail, warned_};
}

}  // namespace qprof::record::session
