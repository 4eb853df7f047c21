// SPDX-License-Identifier: Apache-2.0
// GPU samples on the run loop's schedule: GPUDEV and GPU trace lines from one Backend.
//
// Called on every host sample. Device totals (fast: NVML ≈ 12 µs) are read on the calling
// thread; per-process queries (slow: a process-list call took ≈ 4.5 ms and holds driver locks)
// run on a helper thread of their own, on their own schedule (default every 0.1 s), so a slow
// driver call never delays a host sample. Each query is timed and its schedule stretched so that
// GPU queries' steady cost (SteadyCost) stays within a CPU budget (2 % of one core: device totals
// are thinned to a quarter of it, process queries to three quarters), never faster than asked.
// Between process queries the latest per-process figure is reused. Every call but the
// constructor's belongs to one thread, the run loop's; the helper thread only runs the backend's
// per-process queries (process_usage, device_util, pcie_throughput).
//
// The tree's figure of a device falls back to the device's total use, flagged, when per-process
// figures cannot be had: the process lists never hold a PID of the tree while the device's use
// rises with the job (a PID namespace: NVML lists host PIDs), the lists are refused (no
// permission), or the tree's processes are listed without their memory.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "qprof/common/least_of_latest.hpp"
#include "qprof/gpu/backend.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::gpu {

struct SamplerOptions {
  std::int64_t process_interval_ns = 100'000'000;  // asked period of per-process queries
  std::int64_t device_interval_ns = 0;             // least period of device totals; 0: every call
  double cpu_budget = 0.02;                        // GPU queries' share of one core, at most
  bool process_thread = true;                      // per-process queries on a helper thread
  // CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER as the job sees them (see visible_devices()).
  // from_environment() fills them from qprof's own environment, which the job inherits.
  std::optional<std::string> cuda_visible_devices;
  std::optional<std::string> cuda_device_order;
  // How far a device's use must rise above its first reading before "no PID of the tree in the
  // process lists" is taken for a PID namespace.
  Bytes namespace_rise = Bytes{64} << 20;

  static SamplerOptions from_environment();
};

// What the run found, per device, for the summary.
struct DeviceSummary {
  int index = -1;  // GPUDEV index in the trace; -1: never recorded
  std::string uuid;
  std::string name;
  Bytes total = 0;
  bool visible = true;  // selected by CUDA_VISIBLE_DEVICES (recorded from the start)
  Bytes peak_tree = 0;  // the tree's peak on this device
  Seconds peak_tree_t = 0;
  Bytes peak_used = 0;                // the device's peak total use (every tenant)
  bool tree_is_device_total = false;  // some of the tree's figures are the device's total
  std::uint64_t util_samples = 0;     // GPUUTIL lines written for it
  double busy_percent_sum = 0;        // Σ of their busy % (mean = sum / samples)
};

struct Summary {
  std::string backend;  // Backend::name(); empty without a backend
  std::vector<DeviceSummary> devices;
  Bytes peak_tree_total = 0;  // peak of Σ devices of the tree's figure (gpu_memory_mb)
  Seconds peak_tree_total_t = 0;
  bool any_device_total = false;  // some tree figure is a device total ("not per-process")
  std::uint64_t samples = 0;      // calls that wrote GPU lines
  std::uint64_t device_queries = 0;
  std::uint64_t process_queries = 0;
  std::int64_t device_query_ns = 0;      // mean wall time of one device-totals query
  std::int64_t process_query_ns = 0;     // mean wall time of one process query
  std::int64_t process_interval_ns = 0;  // the period in force at the end (≥ the asked one)
  double query_time_share = 0;           // wall time of the device and process queries / run time (PCIe apart)
  std::uint64_t pcie_queries = 0;        // PCIe throughput queries (their own schedule)
  std::int64_t pcie_query_ns = 0;        // mean wall time of one (NVML samples each counter for 20 ms)
};

// PCIe throughput is asked for at most this often, and its queries (mostly the driver's 20 ms
// sampling window per counter, not CPU) kept under a tenth of the helper thread's time.
inline constexpr std::int64_t kPcieIntervalNs = 1'000'000'000;
inline constexpr double kPcieShare = 0.1;

// What a kind of query costs when nothing disturbs it: the least of its latest eight costs. A
// budget judged on each cost, or on an average, is stretched for seconds by one cold first call
// or one preemption of the thread on a busy machine (the wall time of the query it measures).
class SteadyCost {
 public:
  void add(std::int64_t cost_ns) { costs_.add(cost_ns); }
  // 0 until two queries were timed: the first alone (a cold driver) does not judge.
  std::int64_t steady_ns() const { return costs_.count() < 2 ? 0 : costs_.least(); }

 private:
  LeastOfLatest<std::int64_t> costs_;
};

class Sampler {
 public:
  // `backend` may be null: then every call does nothing.
  Sampler(std::unique_ptr<Backend> backend, SamplerOptions options = {});
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // One GPU sample at `mono_ns` (CLOCK_MONOTONIC) = Unix time `t`, for the tree's current PIDs
  // (any order). Writes GPUDEV lines the first time a device is recorded and GPU lines for every
  // recorded device. Never throws; allocation-free in steady state.
  void sample(std::int64_t mono_ns, Seconds t, std::span<const pid_t> tree, trace::Writer& out) noexcept;

  // A sample at a checkpoint (a marker): the per-process figure is asked for now and waited for
  // (at most kCheckpointWaitNs), so that the checkpoint holds the GPU memory of its moment.
  static constexpr std::int64_t kCheckpointWaitNs = 100'000'000;
  void sample_checkpoint(std::int64_t mono_ns, Seconds t, std::span<const pid_t> tree, trace::Writer& out) noexcept;

  // Warnings to say once (print and write as NOTE): checked cheaply, taken rarely.
  bool has_warnings() const { return has_warnings_.load(std::memory_order_relaxed); }
  std::vector<std::string> take_warnings();

  // Stops the helper thread (also done by the destructor); later calls do nothing.
  void stop();

  Summary summary() const;
  const Backend* backend() const { return backend_.get(); }
  bool enabled() const { return backend_ != nullptr; }
  // Σ devices of the tree's figure at the latest GPU sample (a checkpoint's Snapshot::gpu_tree);
  // nullopt before the first one.
  std::optional<Bytes> last_tree_total() const {
    return samples_ > 0 ? std::optional<Bytes>(last_total_) : std::nullopt;
  }

  // Tests: wait until the process query in flight, if any, has been published (true), at most
  // `timeout_ns`.
  bool wait_process_query(std::int64_t timeout_ns);

 private:
  struct Dev;
  void start_thread();
  void worker();
  void run_process_query(std::vector<pid_t>& pids, std::vector<DeviceProcesses>& out, std::int64_t& cost_ns);
  void measure_pcie(std::int64_t asked_ns);
  void take_process_result(std::int64_t now);
  void post_process_query(std::int64_t now, std::span<const pid_t> tree);
  // The tree's processes asked for where due, and the device totals read where due or where a
  // process figure came: true when either brought something new.
  bool query(std::int64_t mono_ns, std::span<const pid_t> tree);
  void read_device_totals(std::int64_t mono_ns);
  void judge_fallbacks();
  void say_backend_warnings();
  // Device i's GPU line, where the device is recorded: the tree's bytes on it.
  std::optional<Bytes> write_device_sample(std::int64_t mono_ns, Seconds t, std::size_t i, trace::Writer& out);
  void add_tree_total(Seconds t, Bytes total);
  void warn(std::string text);
  void write_device(trace::Writer& out, std::size_t i);
  void write_util(trace::Writer& out, Seconds t);
  void publish_util();  // work_util_ into published_util_, under mu_

  std::unique_ptr<Backend> backend_;
  SamplerOptions opt_;
  std::vector<Dev> devs_;
  std::vector<Bytes> used_;  // latest device totals
  int next_index_ = 0;
  bool stopped_ = false;

  // Schedules (calling thread).
  std::int64_t first_ns_ = -1;
  std::int64_t last_ns_ = -1;
  std::int64_t next_device_ns_ = 0;
  std::int64_t next_process_ns_ = 0;
  std::int64_t process_period_ns_ = 0;
  SteadyCost device_cost_;
  SteadyCost process_cost_;
  std::int64_t device_cost_total_ = 0;
  std::int64_t process_cost_total_ = 0;
  std::uint64_t device_queries_ = 0;
  std::uint64_t process_queries_ = 0;
  std::uint64_t samples_ = 0;
  bool in_flight_ = false;
  std::int64_t in_flight_asked_ns_ = 0;  // when the query in flight (or just run) was asked
  bool any_matched_ = false;
  Bytes peak_total_ = 0;
  Bytes last_total_ = 0;
  Seconds peak_total_t_ = 0;
  std::vector<DeviceProcesses> latest_;  // the latest process result (calling thread's copy)

  // Hand-over between the calling thread and the helper (under mu_).
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<pid_t> request_;         // the PIDs of the query asked for
  std::int64_t request_asked_ns_ = 0;  // and when (the calling thread's clock)
  bool requested_ = false;
  bool quit_ = false;
  std::vector<DeviceProcesses> published_;
  std::int64_t published_cost_ns_ = 0;
  std::uint64_t published_seq_ = 0;
  std::uint64_t taken_seq_ = 0;
  std::thread thread_;
  std::vector<pid_t> work_pids_;  // helper's (or inline) buffers
  std::vector<DeviceProcesses> work_out_;
  // Busy time (GPUUTIL), taken with each process query.
  std::vector<DeviceUtil> work_util_, published_util_, latest_util_;
  bool work_util_ok_ = false, published_util_ok_ = false;
  bool util_fresh_ = false;         // latest_util_ not written yet (calling thread)
  std::int64_t next_pcie_ns_ = -1;  // helper's (or inline) schedule; -1: a second after the first query
  std::uint64_t pcie_queries_ = 0;
  std::int64_t pcie_cost_total_ = 0;

  std::vector<std::string> warnings_;  // under mu_
  std::vector<std::string> scratch_warnings_;
  std::atomic<bool> has_warnings_{false};
};

}  // namespace qprof::gpu
