// SPDX-License-Identifier: Apache-2.0
// The GPU side of a run: the backend chosen by --gpu (its helpers, outsiders of the tree), the
// tree's GPU memory sampled with each regular sample and at checkpoints, and the report's GPU
// lines at the end.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "notices.hpp"
#include "qprof/gpu/sampler.hpp"
#include "qprof/record/options.hpp"
#include "qprof/record/proc_tree.hpp"
#include "qprof/record/session.hpp"

namespace qprof::record::session {

class GpuSampling {
 public:
  GpuSampling() = default;
  GpuSampling(const GpuSampling&) = delete;
  GpuSampling& operator=(const GpuSampling&) = delete;

  // Before the tree is primed: the smi backends start helpers that must be known as outsiders.
  void open(const RunOptions& options, Notices& notices);
  bool active() const { return sampler_ != nullptr; }
  std::span<const pid_t> helpers() const { return helpers_; }
  void sample(std::int64_t now, Seconds t, ProcTree& tree, trace::Writer& out, Notices& notices);
  void sample_checkpoint(std::int64_t now, Seconds t, ProcTree& tree, trace::Writer& out, Notices& notices);
  std::optional<Bytes> tree_total() const;  // the latest sample's, Σ devices
  // Stops the sampler; its peak, backend and devices go to `report`.
  void finish(RunReport& report);

 private:
  void say_warnings(Notices& notices);

  std::unique_ptr<gpu::Sampler> sampler_;
  std::vector<pid_t> helpers_;  // qprof's children that are not the tree's
};

}  // namespace qprof::record::session
