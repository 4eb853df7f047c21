// SPDX-License-Identifier: Apache-2.0
#include "qprof/gpu/sampler.hpp"

#include <algorithm>
#include <cstdlib>

#include "qprof/common/clock.hpp"
#include "qprof/common/units.hpp"

namespace qprof::gpu {
using trace::GpuDevice;
using trace::GpuSample;
using trace::GpuUtilSample;

namespace {

// What the tree's figure of a device is, when it cannot be the per-process sum.
enum Fallback : unsigned { kNone = 0, kNamespace = 1, kDenied = 2, kNoFigures = 4 };

// Whom a device holds, by its latest process list.
DeviceUtil::Tenancy tenancy(const DeviceProcesses& p) {
  using T = DeviceUtil::Tenancy;
  if (p.status != DeviceProcesses::Status::ok) return T::unknown;
  if (p.matched == 0) return T::absent;
  return p.every_tenant && p.matched == p.listed ? T::alone : T::shared;
}

}  // namespace

struct Sampler::Dev {
  const Device* info = nullptr;
  bool visible = true;
  int index = -1;                   // GPUDEV index once recorded
  Bytes tree = 0;                   // latest per-process figure
  std::int64_t tree_asked_ns = -1;  // when the query that gave it was asked (monotonic)
  Bytes first_used = kUnknown;
  Bytes max_used = 0;
  Bytes max_used_posted = 0;  // max_used when the process query in flight was asked for
  Bytes max_used_judged = 0;  // … and for the latest query taken: what its lists are judged against
  bool ever_listed = false;
  std::uint64_t ok = 0, unavailable = 0, failed = 0;  // process queries by outcome
  unsigned fallback = kNone;                          // in force now
  unsigned warned = kNone;                            // reasons already said
  bool warned_back = false;                           // "per-process again" said
  bool ever_fallback = false;
  Bytes peak_tree = 0;
  Seconds peak_tree_t = 0;
  Bytes peak_used = 0;
  std::uint64_t util_samples = 0;
  double busy_percent_sum = 0;
};

SamplerOptions SamplerOptions::from_environment() {
  SamplerOptions o;
  if (const char* v = std::getenv("CUDA_VISIBLE_DEVICES")) o.cuda_visible_devices = v;
  if (const char* v = std::getenv("CUDA_DEVICE_ORDER")) o.cuda_device_order = v;
  return o;
}

Sampler::Sampler(std::unique_ptr<Backend> backend, SamplerOptions options)
    : backend_(std::move(backend)), opt_(std::move(options)) {
  if (!backend_) return;
  if (opt_.process_interval_ns < 1'000'000) opt_.process_interval_ns = 1'000'000;
  if (!(opt_.cpu_budget > 0)) opt_.cpu_budget = 0.02;
  process_period_ns_ = opt_.process_interval_ns;
  const std::vector<Device>& devices = backend_->devices();
  std::vector<bool> visible(devices.size(), true);
  if (backend_->cuda_devices()) {
    std::string warning;
    std::optional<std::string_view> cvd, order;
    if (opt_.cuda_visible_devices) cvd = *opt_.cuda_visible_devices;
    if (opt_.cuda_device_order) order = *opt_.cuda_device_order;
    visible = visible_devices(devices, cvd, order, &warning);
    if (!warning.empty()) warn(warning);
  }
  devs_.resize(devices.size());
  for (std::size_t i = 0; i < devices.size(); ++i) {
    devs_[i].info = &devices[i];
    devs_[i].visible = visible[i];
  }
  used_.assign(devices.size(), kUnknown);
  latest_.resize(devices.size());
  published_.resize(devices.size());
  work_out_.resize(devices.size());
  work_util_.resize(devices.size());
  published_util_.resize(devices.size());
  latest_util_.resize(devices.size());
  request_.reserve(4096);
  work_pids_.reserve(4096);
  scratch_warnings_.reserve(16);
  backend_->take_warnings(scratch_warnings_);
  for (std::string& w : scratch_warnings_) warn(std::move(w));
  scratch_warnings_.clear();
  if (opt_.process_thread) start_thread();
}

Sampler::~Sampler() { stop(); }

void Sampler::start_thread() {
  try {
    thread_ = std::thread([this] { worker(); });
  } catch (const std::exception&) {
    opt_.process_thread = false;  // no thread to be had: queries run inline
  }
}

void Sampler::stop() {
  if (stopped_) return;
  stopped_ = true;
  {
    std::lock_guard<std::mutex> lock(mu_);
    quit_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Sampler::warn(std::string text) {
  std::lock_guard<std::mutex> lock(mu_);
  warnings_.push_back(std::move(text));
  has_warnings_.store(true, std::memory_order_relaxed);
}

std::vector<std::string> Sampler::take_warnings() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> out;
  out.swap(warnings_);
  has_warnings_.store(false, std::memory_order_relaxed);
  return out;
}

void Sampler::run_process_query(std::vector<pid_t>& pids, std::vector<DeviceProcesses>& out, std::int64_t& cost_ns) {
  std::sort(pids.begin(), pids.end());
  pids.erase(std::unique(pids.begin(), pids.end()), pids.end());
  const std::int64_t t0 = monotonic_ns();
  if (!backend_->process_usage(pids, out)) {
    for (DeviceProcesses& d : out) {
      if (d.status == DeviceProcesses::Status::ok) d = DeviceProcesses{};  // nothing usable this time
    }
  }
  // Busy time rides on the process query (same thread, same cost and budget): rates are
  // cheap, the tree's share is asked only of the devices it shares with other processes.
  for (std::size_t i = 0; i < work_util_.size() && i < out.size(); ++i) {
    work_util_[i].tenancy = tenancy(out[i]);
  }
  work_util_ok_ = backend_->device_util(pids, work_util_);
  cost_ns = monotonic_ns() - t0;
}

// PCIe throughput, on a slower schedule of its own: NVML samples each counter for 20 ms, so a
// measure holds the helper for 40 ms. Not at the first query, so that a run shorter than a
// second never waits for one at its end (its figure would be one 40 ms glimpse anyway); on the
// helper thread, after the query's figures are handed over, so that they land without waiting
// for it. Its figures are carried in work_util_ and go out with the next query's.
void Sampler::measure_pcie(std::int64_t asked_ns) {
  if (!work_util_ok_) return;
  if (next_pcie_ns_ < 0) next_pcie_ns_ = asked_ns + kPcieIntervalNs;
  if (asked_ns < next_pcie_ns_) return;
  const std::int64_t t0 = monotonic_ns();
  backend_->pcie_throughput(work_util_);
  const std::int64_t cost = monotonic_ns() - t0;
  ++pcie_queries_;
  pcie_cost_total_ += cost;
  next_pcie_ns_ =
      asked_ns + std::max(kPcieIntervalNs, static_cast<std::int64_t>(static_cast<double>(cost) / kPcieShare));
}

void Sampler::publish_util() {
  std::copy(work_util_.begin(), work_util_.end(), published_util_.begin());
  published_util_ok_ = work_util_ok_;
}

void Sampler::worker() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    cv_.wait(lock, [this] { return requested_ || quit_; });
    if (quit_) return;
    requested_ = false;
    work_pids_.swap(request_);
    const std::int64_t asked = request_asked_ns_;
    lock.unlock();
    std::int64_t cost = 0;
    run_process_query(work_pids_, work_out_, cost);
    lock.lock();
    std::copy(work_out_.begin(), work_out_.end(), published_.begin());
    publish_util();
    published_cost_ns_ = cost;
    ++published_seq_;
    cv_.notify_all();
    if (quit_) return;
    lock.unlock();
    measure_pcie(asked);
    lock.lock();
  }
}

void Sampler::post_process_query(std::int64_t now, std::span<const pid_t> tree) {
  next_process_ns_ = now + process_period_ns_;
  in_flight_asked_ns_ = now;
  for (Dev& d : devs_) d.max_used_posted = d.max_used;
  if (opt_.process_thread) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      request_.assign(tree.begin(), tree.end());
      request_asked_ns_ = now;
      requested_ = true;
    }
    in_flight_ = true;
    cv_.notify_all();
    return;
  }
  work_pids_.assign(tree.begin(), tree.end());
  std::int64_t cost = 0;
  run_process_query(work_pids_, work_out_, cost);
  measure_pcie(now);  // inline: nothing waits on another thread, its figures go out at once
  std::lock_guard<std::mutex> lock(mu_);
  std::copy(work_out_.begin(), work_out_.end(), published_.begin());
  publish_util();
  published_cost_ns_ = cost;
  ++published_seq_;
  in_flight_ = true;  // taken at once by take_process_result()
}

bool Sampler::wait_process_query(std::int64_t timeout_ns) {
  if (!in_flight_) return true;
  std::unique_lock<std::mutex> lock(mu_);
  return cv_.wait_for(lock, std::chrono::nanoseconds(timeout_ns), [this] { return published_seq_ != taken_seq_; });
}

void Sampler::take_process_result(std::int64_t now) {
  (void)now;
  std::int64_t cost = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (published_seq_ == taken_seq_) return;
    taken_seq_ = published_seq_;
    std::copy(published_.begin(), published_.end(), latest_.begin());
    std::copy(published_util_.begin(), published_util_.end(), latest_util_.begin());
    util_fresh_ = published_util_ok_;
    cost = published_cost_ns_;
  }
  in_flight_ = false;
  ++process_queries_;
  process_cost_total_ += cost;
  process_cost_.add(cost);
  // Within the budget: the process queries may take three quarters of it.
  const auto needed =
      static_cast<std::int64_t>(static_cast<double>(process_cost_.steady_ns()) / (opt_.cpu_budget * 0.75));
  const std::int64_t period = std::max(opt_.process_interval_ns, needed);
  next_process_ns_ += period - process_period_ns_;
  process_period_ns_ = period;

  using Status = DeviceProcesses::Status;
  for (std::size_t i = 0; i < devs_.size(); ++i) {
    Dev& d = devs_[i];
    d.max_used_judged = d.max_used_posted;
    const DeviceProcesses& r = latest_[i];
    if (r.status == Status::ok) {
      ++d.ok;
      d.tree = r.tree;
      d.tree_asked_ns = in_flight_asked_ns_;
      if (r.listed > 0) d.ever_listed = true;
      if (r.matched > r.unknown) any_matched_ = true;
    } else if (r.status == Status::unavailable) {
      ++d.unavailable;
    } else {
      ++d.failed;
    }
    // A failed query keeps the previous figure.
  }
}

void Sampler::judge_fallbacks() {
  using Status = DeviceProcesses::Status;
  for (std::size_t i = 0; i < devs_.size(); ++i) {
    Dev& d = devs_[i];
    // A list can only be blamed for a rise that happened before it was asked for: the device's
    // total moves at once, the lists on their slower schedule.
    const bool rose = d.first_used != kUnknown && d.max_used_judged >= d.first_used + opt_.namespace_rise;
    unsigned want = kNone;
    const DeviceProcesses& r = latest_[i];
    if (r.status == Status::failed && d.ok + d.unavailable > 0) continue;  // a hiccup changes nothing
    if (r.status == Status::ok && r.matched > 0 && r.unknown == r.matched) {
      want = kNoFigures;
    } else if (backend_->lists_every_process() && !any_matched_ && d.ever_listed && rose) {
      want = kNamespace;
    } else if (d.ok == 0 && d.unavailable + d.failed > 0 && rose) {
      want = kDenied;
    }
    if (want == d.fallback) continue;
    const std::string& uuid = d.info->uuid;
    if (want != kNone && !(d.warned & want)) {
      d.warned |= want;
      const std::string tail = "; recording the device's total use as the tree's GPU memory (every tenant included)";
      if (want == kNamespace) {
        warn("GPU " + uuid + ": its process list never holds a process of the tree while its use rose by " +
             human_bytes(d.max_used_judged - d.first_used) +
             ": qprof is probably in a container with its own PID namespace (the driver lists host PIDs)" + tail);
      } else if (want == kDenied) {
        warn("GPU " + uuid + ": per-process GPU memory cannot be read here (refused, not supported or failing)" + tail);
      } else {
        warn("GPU " + uuid + ": the driver lists the tree's processes without their memory" + tail);
      }
    } else if (want == kNone && d.fallback != kNone && !d.warned_back) {
      d.warned_back = true;
      warn("GPU " + uuid +
           ": per-process figures are available again; the tree's GPU memory is per-process from now on");
    }
    d.fallback = want;
    if (want != kNone) d.ever_fallback = true;
  }
}

void Sampler::write_device(trace::Writer& out, std::size_t i) {
  Dev& d = devs_[i];
  if (d.index < 0) {
    d.index = next_index_++;
    out.gpu_device(GpuDevice{d.index, d.info->uuid, d.info->name, d.info->total});
  }
}

void Sampler::write_util(trace::Writer& out, Seconds t) {
  util_fresh_ = false;
  for (std::size_t i = 0; i < devs_.size(); ++i) {
    Dev& d = devs_[i];
    const DeviceUtil& u = latest_util_[i];
    if (d.index < 0 || !u.valid) continue;  // devices recorded (GPUDEV) only
    out.gpu_util(GpuUtilSample{t, d.index, u.busy, u.mem_bw, u.tree_busy, u.pcie_rx, u.pcie_tx});
    ++d.util_samples;
    d.busy_percent_sum += u.busy;
  }
}

bool Sampler::query(std::int64_t mono_ns, std::span<const pid_t> tree) {
  const std::uint64_t before = process_queries_;
  take_process_result(mono_ns);
  if (!in_flight_ && mono_ns >= next_process_ns_) {
    post_process_query(mono_ns, tree);
    if (!opt_.process_thread) take_process_result(mono_ns);
  }
  const bool fresh_processes = process_queries_ != before;
  // A new per-process figure is written beside a device total read after it was asked for
  // (one more read per query, microseconds): a checkpoint's line, and every line, then never
  // shows the tree above a device total older than its figure.
  if (mono_ns >= next_device_ns_ || fresh_processes) {
    read_device_totals(mono_ns);
    return true;
  }
  return false;
}

void Sampler::read_device_totals(std::int64_t mono_ns) {
  const std::int64_t t0 = monotonic_ns();
  backend_->device_used(used_);
  const std::int64_t cost = monotonic_ns() - t0;
  ++device_queries_;
  device_cost_total_ += cost;
  device_cost_.add(cost);
  // Device totals may take a quarter of the budget.
  const auto needed =
      static_cast<std::int64_t>(static_cast<double>(device_cost_.steady_ns()) / (opt_.cpu_budget * 0.25));
  next_device_ns_ = mono_ns + std::max(opt_.device_interval_ns, needed);
  for (std::size_t i = 0; i < devs_.size(); ++i) {
    Dev& d = devs_[i];
    if (used_[i] == kUnknown) continue;
    if (d.first_used == kUnknown) d.first_used = used_[i];
    d.max_used = std::max(d.max_used, used_[i]);
  }
}

void Sampler::say_backend_warnings() {
  backend_->take_warnings(scratch_warnings_);  // a lock, no allocation, when there are none
  if (scratch_warnings_.empty()) return;
  for (std::string& w : scratch_warnings_) warn(std::move(w));
  scratch_warnings_.clear();
}

std::optional<Bytes> Sampler::write_device_sample(std::int64_t mono_ns, Seconds t, std::size_t i, trace::Writer& out) {
  Dev& d = devs_[i];
  const Bytes used = used_[i] == kUnknown ? 0 : used_[i];
  Bytes tree_bytes = d.fallback != kNone ? used : d.tree;
  // The device's total is never older than the tree's figure (query). When it is below it, the
  // tree freed memory since its query: the tree holds no more than the device does.
  if (used > 0 && tree_bytes > used) tree_bytes = used;  // 0: a backend that cannot say
  // Devices the job may see are recorded from the start; the others once the tree uses them.
  if (d.index < 0 && !d.visible && tree_bytes == 0) return std::nullopt;
  write_device(out, i);
  // How old the tree's figure is at this line: a device total is read now; a per-process
  // figure is that of the last query that answered, asked at most --gpu-interval ago (more
  // when a query is slow); before any answered, the 0 assumed stands from the first sample.
  const std::int64_t asked = d.tree_asked_ns >= 0 ? d.tree_asked_ns : first_ns_;
  const Seconds tree_age =
      d.fallback != kNone ? 0.0 : static_cast<double>(std::max<std::int64_t>(0, mono_ns - asked)) * 1e-9;
  out.gpu(GpuSample{t, d.index, tree_bytes, used, tree_age});
  if (d.peak_tree_t == 0 || tree_bytes > d.peak_tree) {
    d.peak_tree = tree_bytes;
    d.peak_tree_t = t;
  }
  d.peak_used = std::max(d.peak_used, used);
  return tree_bytes;
}

void Sampler::add_tree_total(Seconds t, Bytes total) {
  ++samples_;
  last_total_ = total;
  if (samples_ == 1 || total > peak_total_) {
    peak_total_ = total;
    peak_total_t_ = t;
  }
}

void Sampler::sample(std::int64_t mono_ns, Seconds t, std::span<const pid_t> tree, trace::Writer& out) noexcept {
  if (!backend_ || stopped_) return;
  try {
    if (first_ns_ < 0) first_ns_ = mono_ns;
    last_ns_ = mono_ns;
    if (!query(mono_ns, tree)) return;
    judge_fallbacks();
    say_backend_warnings();
    Bytes total = 0;
    bool wrote = false;
    for (std::size_t i = 0; i < devs_.size(); ++i) {
      if (const auto tree_bytes = write_device_sample(mono_ns, t, i, out)) {
        total += *tree_bytes;
        wrote = true;
      }
    }
    if (util_fresh_) write_util(out, t);
    if (wrote) add_tree_total(t, total);
  } catch (...) {
    // A GPU sample is never worth the run: this one is lost.
  }
}

void Sampler::sample_checkpoint(std::int64_t mono_ns, Seconds t, std::span<const pid_t> pids,
                                trace::Writer& out) noexcept {
  if (!backend_ || stopped_) return;
  // A query in flight was asked before the checkpoint: let it land, then ask anew and wait;
  // both waits share one budget of kCheckpointWaitNs.
  const std::int64_t deadline = monotonic_ns() + kCheckpointWaitNs;
  if (in_flight_ && opt_.process_thread) wait_process_query(kCheckpointWaitNs);
  take_process_result(mono_ns);
  if (!in_flight_) {
    post_process_query(mono_ns, pids);
    const std::int64_t left = deadline - monotonic_ns();
    if (opt_.process_thread && left > 0) wait_process_query(left);
  }
  sample(mono_ns, t, pids, out);
}

Summary Sampler::summary() const {
  Summary s;
  if (!backend_) return s;
  s.backend = std::string(backend_->name());
  for (const Dev& d : devs_) {
    DeviceSummary ds;
    ds.index = d.index;
    ds.uuid = d.info->uuid;
    ds.name = d.info->name;
    ds.total = d.info->total;
    ds.visible = d.visible;
    ds.peak_tree = d.peak_tree;
    ds.peak_tree_t = d.peak_tree_t;
    ds.peak_used = d.peak_used;
    ds.tree_is_device_total = d.ever_fallback;
    ds.util_samples = d.util_samples;
    ds.busy_percent_sum = d.busy_percent_sum;
    s.any_device_total = s.any_device_total || (d.ever_fallback && d.index >= 0);
    s.devices.push_back(std::move(ds));
  }
  s.peak_tree_total = peak_total_;
  s.peak_tree_total_t = peak_total_t_;
  s.samples = samples_;
  s.device_queries = device_queries_;
  s.process_queries = process_queries_;
  s.device_query_ns = device_queries_ ? device_cost_total_ / static_cast<std::int64_t>(device_queries_) : 0;
  s.process_query_ns = process_queries_ ? process_cost_total_ / static_cast<std::int64_t>(process_queries_) : 0;
  s.process_interval_ns = process_period_ns_;
  s.pcie_queries = pcie_queries_;  // the helper has stopped, or never ran them
  s.pcie_query_ns = pcie_queries_ ? pcie_cost_total_ / static_cast<std::int64_t>(pcie_queries_) : 0;
  if (last_ns_ > first_ns_) {
    s.query_time_share =
        static_cast<double>(device_cost_total_ + process_cost_total_) / static_cast<double>(last_ns_ - first_ns_);
  }
  return s;
}

}  // namespace qprof::gpu
