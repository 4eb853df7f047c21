// SPDX-License-Identifier: Apache-2.0
#include "gpu_sampling.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>
#include <system_error>
#include <thread>

#include "qprof/common/units.hpp"
#include "qprof/gpu/backend.hpp"

namespace qprof::record::session {
using trace::MemSample;

void GpuSampling::open(const RunOptions& o, Notices& notices) {
  choice_ = gpu::parse_choice(o.gpu).value_or(gpu::Choice::automatic);
  verbose_ = o.verbose;
  quiet_ = o.quiet;
  gpu_interval_ = o.gpu_interval;
  gpu::OpenOptions open;
  open.proc_root = o.proc_root;
  open.smi_interval_ms = std::max<std::int64_t>(100, std::llround(o.gpu_interval * 1000));
  if (gpu::opens_without_helpers(choice_, open)) {
    open.no_helpers = true;
    std::promise<gpu::Selection> opened;
    std::future<gpu::Selection> opening = opened.get_future();
    try {
      // The thread owns the promise and copies of what it reads: left running at exit, it
      // touches nothing of the session's.
      std::thread([opened = std::move(opened), choice = choice_, open]() mutable {
        try {
          opened.set_value(gpu::open_backend(choice, open));
        } catch (...) {
          opened.set_exception(std::current_exception());
        }
      }).detach();
      opening_ = std::move(opening);
      opening_since_ = std::chrono::steady_clock::now();
      return;
    } catch (const std::system_error&) {  // no thread to be had: opened here, as before
    }
  }
  adopt(gpu::open_backend(choice_, open), notices);
}

void GpuSampling::adopt(gpu::Selection selection, Notices& notices) {
  if (selection.failed_request) {
    notices.warn(selection.message);
  } else if (!selection.backend && choice_ == gpu::Choice::automatic) {
    // No GPU is the normal case on a CPU-only machine: kept in the trace, said only with -v.
    notices.note_quietly(selection.message);
    if (verbose_) notices.say(selection.message);
  } else if (!quiet_ && (selection.backend || verbose_)) {
    notices.say(selection.message);
  }
  if (!selection.backend) return;
  helpers_ = selection.backend->helper_pids();
  gpu::SamplerOptions options = gpu::SamplerOptions::from_environment();
  options.process_interval_ns = std::llround(gpu_interval_ * 1e9);
  sampler_ = std::make_unique<gpu::Sampler>(std::move(selection.backend), options);
}

void GpuSampling::take_opened(Notices& notices, std::optional<std::chrono::nanoseconds> wait) {
  if (!opening_.valid()) return;
  if (wait && opening_.wait_for(*wait) != std::future_status::ready) return;
  adopt(opening_.get(), notices);
}

void GpuSampling::sample(std::int64_t now, Seconds t, ProcTree& tree, trace::Writer& out, Notices& notices) {
  take_opened(notices, std::chrono::nanoseconds(0));
  if (!sampler_) return;
  sampler_->sample(now, t, tree.pids(), out);
  say_warnings(notices);
}

void GpuSampling::sample_checkpoint(std::int64_t now, Seconds t, ProcTree& tree, trace::Writer& out, Notices& notices) {
  // A checkpoint holds the GPU memory of its moment: a backend still opening (a marker in the
  // job's first moments) is waited for, up to kOpenWaitAtCheckpoint — never longer than the job
  // itself waited when the backend opened before it.
  take_opened(notices, kOpenWaitAtCheckpoint);
  if (!sampler_) return;
  sampler_->sample_checkpoint(now, t, tree.pids(), out);
  say_warnings(notices);
}

std::optional<Bytes> GpuSampling::tree_total() const { return sampler_ ? sampler_->last_tree_total() : std::nullopt; }

void GpuSampling::say_warnings(Notices& notices) {
  if (!sampler_->has_warnings()) return;
  for (const std::string& w : sampler_->take_warnings()) notices.warn(w);
}

GpuReport GpuSampling::finish(Notices& notices) {
  GpuReport report;
  if (choice_ == gpu::Choice::automatic && !verbose_ && opening_.valid() &&
      opening_.wait_for(std::chrono::seconds(0)) != std::future_status::ready) {
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - opening_since_);
    const std::string note = "GPU: the backend was still opening when the command ended (" +
                             std::to_string(ms.count()) + " ms after it began): no GPU figures";
    notices.note_quietly(note);
    opening_ = {};
    return report;
  }
  take_opened(notices, std::nullopt);
  if (!sampler_) return report;
  sampler_->stop();
  const gpu::Summary g = sampler_->summary();
  report.backend = g.backend;
  report.is_device_total = g.any_device_total;
  if (g.samples > 0) report.peak = MemSample{g.peak_tree_total_t, g.peak_tree_total};
  for (const gpu::DeviceSummary& d : g.devices) {
    if (d.index < 0) continue;
    const std::string busy = d.util_samples > 0 ? ", busy " +
                                                      std::to_string(static_cast<int>(std::lround(
                                                          d.busy_percent_sum / static_cast<double>(d.util_samples)))) +
                                                      " % on average"
                                                : "";
    report.devices.push_back(d.name + " (" + d.uuid + "): the tree " + human_bytes(d.peak_tree) +
                             (d.tree_is_device_total ? " (device total)" : "") + ", the device " +
                             human_bytes(d.peak_used) + " of " + human_bytes(d.total) + busy);
  }
  return report;
}

}  // namespace qprof::record::session
