// SPDX-License-Identifier: Apache-2.0
// The GPU side of a run: the backend chosen by --gpu (its helpers, outsiders of the tree), the
// tree's GPU memory sampled with each regular sample and at checkpoints, and the report's GPU
// lines at the end.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <future>
#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "notices.hpp"
#include "qprof/gpu/backend.hpp"
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

  // Before the tree is primed: the smi backends start helpers that must be known as outsiders,
  // so they open here. A backend that starts no process (NVML, whose start takes tens of
  // milliseconds; AMD's files) opens on a thread of its own while the command starts, and is
  // taken up at the first sample after it is ready: the job never waits for it.
  void open(const RunOptions& options, Notices& notices);
  bool active() const { return sampler_ != nullptr; }
  std::span<const pid_t> helpers() const { return helpers_; }
  void sample(std::int64_t now, Seconds t, ProcTree& tree, trace::Writer& out, Notices& notices);
  void sample_checkpoint(std::int64_t now, Seconds t, ProcTree& tree, trace::Writer& out, Notices& notices);
  std::optional<Bytes> tree_total() const;  // the latest sample's, Σ devices
  // Stops the sampler; its peak, backend and devices. A backend that --gpu auto
  // is still opening is not waited for: the command ended before it could be sampled, and the
  // wait would add the backend's start (tens of milliseconds for NVML) to every short run. One
  // asked for by name (--gpu nvml), or with -v, is, so that what was found (or why nothing) is said.
  GpuReport finish(Notices& notices);

 private:
  // The opened backend, if any, taken up: what was chosen said, the sampler made.
  void adopt(gpu::Selection selection, Notices& notices);
  static constexpr std::chrono::seconds kOpenWaitAtCheckpoint{2};
  // The backend opening beside the command, taken up once ready: waited for at most `wait`
  // (nullopt: until it is).
  void take_opened(Notices& notices, std::optional<std::chrono::nanoseconds> wait);
  void say_warnings(Notices& notices);

  // From a detached thread's promise: unlike std::async's, this future never waits for the
  // thread when it is dropped.
  std::future<gpu::Selection> opening_;
  std::chrono::steady_clock::time_point opening_since_;
  gpu::Choice choice_ = gpu::Choice::none;
  bool verbose_ = false, quiet_ = false;
  double gpu_interval_ = 0;

  std::unique_ptr<gpu::Sampler> sampler_;
  std::vector<pid_t> helpers_;  // qprof's children that are not the tree's
};

}  // namespace qprof::record::session
