// SPDX-License-Identifier: Apache-2.0
// The memory limit in force (cgroup, Slurm, RLIMIT_AS, the machine's memory): found while the
// command execs, in the trace's header and the report, and said once when the tree's RSS
// crosses 90 % of it.
#pragma once

#include <optional>
#include <string>

#include "notices.hpp"
#include "qprof/record/limit.hpp"
#include "qprof/record/session.hpp"

namespace qprof::record::session {

class MemoryLimitWatch {
 public:
  static constexpr double kWarnShare = 0.9;

  explicit MemoryLimitWatch(std::optional<MemoryLimit> limit = std::nullopt) : limit_(std::move(limit)) {}
  // Looks for it under `proc_root`; a header's limit and limit_source when found.
  void find(const std::string& proc_root, trace::TraceMeta& meta);
  // A regular sample's RSS of the tree.
  // On the basis the limit counts: a cgroup, Slurm or the machine's memory count a page shared by
  // forked workers once, so the footprint (as of the latest stats pass) where there is one.
  void check(Bytes tree_rss, Notices& notices, std::optional<Bytes> footprint = std::nullopt);
  LimitReport report() const;
  std::optional<Bytes> bytes() const { return limit_ ? std::optional<Bytes>(limit_->bytes) : std::nullopt; }

 private:
  std::optional<MemoryLimit> limit_;
  bool warned_ = false;
};

}  // namespace qprof::record::session
