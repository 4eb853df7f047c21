// SPDX-License-Identifier: Apache-2.0
// What the GPU sampler's tests share: a scripted in-process backend whose answers a test sets, a
// trace file read back, and the sampler's options with queries on the calling thread.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "gpu_test_util.hpp"
#include "qprof/common/clock.hpp"
#include "qprof/gpu/backend.hpp"
#include "qprof/gpu/sampler.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::gpu::sampler_fixtures {
using trace::Trace;
using trace::TraceMeta;

inline constexpr Bytes MiB = Bytes{1} << 20;
inline constexpr Bytes GiB = Bytes{1} << 30;
inline constexpr std::int64_t kMs = 1'000'000;

// A backend whose answers the test sets.
class Scripted : public Backend {
 public:
  struct Proc {
    pid_t pid;
    Bytes bytes;  // kUnknown: listed without a figure
  };
  explicit Scripted(std::size_t n, bool lists_everything = true) : every_(lists_everything) {
    for (std::size_t i = 0; i < n; ++i) {
      Device d;
      d.uuid = "GPU-" + std::to_string(i) + "000";
      d.name = "Fake GPU " + std::to_string(i);
      d.total = 16 * GiB;
      d.vendor_index = static_cast<int>(i);
      devices_.push_back(d);
    }
    used_.assign(n, 0);
    procs_.resize(n);
    status_.assign(n, DeviceProcesses::Status::ok);
  }
  std::string_view name() const override { return "scripted"; }
  std::string description() const override { return "scripted"; }
  const std::vector<Device>& devices() const override { return devices_; }
  bool lists_every_process() const override { return every_; }
  bool cuda_devices() const override { return true; }
  bool device_used(std::span<Bytes> used) noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    ++device_calls;
    for (std::size_t i = 0; i < used.size(); ++i) used[i] = used_[i];
    return true;
  }
  bool process_usage(std::span<const pid_t> pids, std::span<DeviceProcesses> out) noexcept override {
    if (delay_us > 0) usleep(static_cast<useconds_t>(delay_us.load()));
    std::lock_guard<std::mutex> lock(mu_);
    ++process_calls;
    last_pids.assign(pids.begin(), pids.end());
    for (std::size_t i = 0; i < out.size(); ++i) {
      DeviceProcesses r;
      r.status = status_[i];
      for (const Proc& p : procs_[i]) {
        ++r.listed;
        if (std::find(pids.begin(), pids.end(), p.pid) == pids.end()) continue;
        ++r.matched;
        if (p.bytes == kUnknown) {
          ++r.unknown;
        } else {
          r.tree += p.bytes;
        }
      }
      out[i] = r;
    }
    return true;
  }

  void set_used(std::size_t d, Bytes b) {
    std::lock_guard<std::mutex> lock(mu_);
    used_[d] = b;
  }
  void set_procs(std::size_t d, std::vector<Proc> p) {
    std::lock_guard<std::mutex> lock(mu_);
    procs_[d] = std::move(p);
  }
  void set_status(std::size_t d, DeviceProcesses::Status s) {
    std::lock_guard<std::mutex> lock(mu_);
    status_[d] = s;
  }

  std::atomic<int> device_calls{0};
  std::atomic<int> process_calls{0};
  std::atomic<long> delay_us{0};
  std::vector<pid_t> last_pids;

 private:
  bool every_;
  std::mutex mu_;
  std::vector<Device> devices_;
  std::vector<Bytes> used_;
  std::vector<std::vector<Proc>> procs_;
  std::vector<DeviceProcesses::Status> status_;
};

// A trace file the test reads back.
class TraceFile {
 public:
  TraceFile() : path_(dir_.file("t.dat")), out_(std::make_unique<trace::Writer>(path_)) {
    TraceMeta m;
    m.format_version = trace::kFormatVersion;
    out_->header(m);
    out_->mem(1.0, 1);
  }
  trace::Writer& out() { return *out_; }
  Trace read() {
    out_->flush();
    return trace::read_trace(path_);
  }

 private:
  test::ScratchDir dir_;
  std::string path_;
  std::unique_ptr<trace::Writer> out_;
};

// Queries on the calling thread. A generous budget, so that a test preempted on a loaded machine
// does not see its schedule stretched; the budget's own tests set theirs.
inline SamplerOptions inline_options(std::int64_t interval_ns = 100 * kMs) {
  SamplerOptions o;
  o.process_thread = false;
  o.process_interval_ns = interval_ns;
  o.cpu_budget = 0.5;
  return o;
}

inline Seconds unix_of(std::int64_t ns) { return 1000.0 + static_cast<double>(ns) * 1e-9; }

}  // namespace qprof::gpu::sampler_fixtures
