// SPDX-License-Identifier: Apache-2.0
// The "smi" backend through nvidia-smi: one long-running query per kind, never a fork per sample.
#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include "qprof/common/find_program.hpp"
#include "qprof/common/units.hpp"
#include "qprof/gpu/smi.hpp"
#include "smi_polling.hpp"

namespace qprof::gpu::smi_detail {
namespace {

class NvidiaSmi final : public PollingBackend {
 public:
  NvidiaSmi(std::string program, std::vector<Device> devices, std::int64_t interval_ms)
      : program_(std::move(program)),
        devices_(std::move(devices)),
        interval_ms_(std::max<std::int64_t>(interval_ms, 20)) {
    used_.assign(devices_.size(), kUnknown);
    apps_.reserve(256);
    pending_.reserve(256);
  }
  ~NvidiaSmi() override {
    stop_thread();
    gpus_.stop();
    apps_child_.stop();
  }

  Result<void> start() {
    const std::string lms = std::to_string(interval_ms_);
    Result<void> started =
        gpus_.start({program_, "--query-gpu=uuid,memory.used", "--format=csv,noheader,nounits", "-lms", lms}, false);
    if (!started) return started;
    started = apps_child_.start(
        {program_, "--query-compute-apps=pid,gpu_uuid,used_memory", "--format=csv,noheader,nounits", "-lms", lms},
        false);
    if (!started) return started;
    last_block_ns_ = monotonic_ns();
    start_thread();
    return {};
  }

  std::string_view name() const override { return "nvidia-smi"; }
  std::vector<pid_t> helper_pids() const override { return {gpus_.pid(), apps_child_.pid()}; }
  std::string description() const override {
    return "nvidia-smi -lms " + std::to_string(interval_ms_) + " (" + program_ + "): " + detail::describe(devices_);
  }
  const std::vector<Device>& devices() const override { return devices_; }
  bool lists_every_process() const override { return true; }
  bool cuda_devices() const override { return true; }
  DeviceModes modes(std::size_t device) const override;

  bool process_usage(std::span<const pid_t> pids, std::span<DeviceProcesses> out) noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    for (DeviceProcesses& d : out) {
      d = DeviceProcesses{};
      d.status = blocks_ > 0 && !apps_dead_ ? DeviceProcesses::Status::ok : DeviceProcesses::Status::failed;
    }
    if (blocks_ == 0 || apps_dead_) return false;
    for (const smi::AppRow& row : apps_) {
      const int i = device_of(row.uuid);
      if (i < 0 || static_cast<std::size_t>(i) >= out.size()) continue;
      DeviceProcesses& d = out[i];
      ++d.listed;
      if (!detail::has_pid(pids, row.pid)) continue;
      ++d.matched;
      if (row.used) {
        d.tree += *row.used;
      } else {
        ++d.unknown;
      }
    }
    return true;
  }

  // Tests: how many process lists the apps loop has delivered.
  std::uint64_t blocks() const {
    std::lock_guard<std::mutex> lock(mu_);
    return blocks_;
  }

 private:
  int device_of(std::string_view uuid) const {
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      if (devices_[i].uuid == uuid) return static_cast<int>(i);
    }
    return -1;
  }
  std::vector<Child*> children() override { return {&gpus_, &apps_child_}; }
  int poll_ms() const override { return static_cast<int>(std::clamp<std::int64_t>(interval_ms_ / 4, 5, 50)); }

  void on_output(std::size_t child, std::int64_t now) override {
    if (child == 0) {
      const bool alive = gpus_.read_lines([&](std::string_view line) {
        std::optional<Bytes> used;
        if (!smi::parse_used_row(line, uuid_, used)) return;
        std::lock_guard<std::mutex> lock(mu_);
        if (const int i = device_of(uuid_); i >= 0) used_[i] = used.value_or(kUnknown);
      });
      if (!alive) {
        std::lock_guard<std::mutex> lock(mu_);
        std::fill(used_.begin(), used_.end(), kUnknown);
        warnings_.once("gpus-died", "nvidia-smi (device totals) stopped; no GPU totals from now on");
      }
      return;
    }
    const bool alive = apps_child_.read_lines([&](std::string_view line) {
      smi::AppRow row;
      if (smi::parse_app_row(line, row)) pending_.push_back(std::move(row));
      last_line_ns_ = now;
      got_line_ = true;
    });
    if (!alive) {
      std::lock_guard<std::mutex> lock(mu_);
      apps_dead_ = true;
      warnings_.once("apps-died", "nvidia-smi (processes) stopped; no per-process GPU figures from now on");
    }
  }

  // One loop iteration prints its rows at once; a pause ends the list. No rows for two periods:
  // no process at all.
  void on_tick(std::int64_t now) override {
    const std::int64_t gap = ms(std::clamp<std::int64_t>(interval_ms_ / 2, 5, 50));
    if (got_line_ && now - last_line_ns_ >= gap) {
      publish(now);
    } else if (!got_line_ && now - last_block_ns_ >= ms(2 * interval_ms_ + 50)) {
      publish(now);
    }
  }

  void publish(std::int64_t now) {
    std::lock_guard<std::mutex> lock(mu_);
    apps_.swap(pending_);
    pending_.clear();
    ++blocks_;
    got_line_ = false;
    last_block_ns_ = now;
  }

  std::string program_;
  std::vector<Device> devices_;
  std::int64_t interval_ms_;
  Child gpus_, apps_child_;
  std::vector<smi::AppRow> apps_;  // the latest complete list
  std::uint64_t blocks_ = 0;
  bool apps_dead_ = false;
  // reader thread only
  std::vector<smi::AppRow> pending_;
  std::string uuid_;
  bool got_line_ = false;
  std::int64_t last_line_ns_ = 0;
  std::int64_t last_block_ns_ = 0;
};

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

// One row of --query-gpu=uuid,compute_mode,mig.mode.current --format=csv,noheader.
DeviceModes modes_of_row(std::string_view row) {
  DeviceModes m;
  const auto c1 = row.find(',');
  const auto c2 = c1 == std::string_view::npos ? c1 : row.find(',', c1 + 1);
  if (c2 == std::string_view::npos) return m;
  const std::string_view compute = trimmed(row.substr(c1 + 1, c2 - c1 - 1)), mig = trimmed(row.substr(c2 + 1));
  for (ComputeMode c : {ComputeMode::default_mode, ComputeMode::exclusive_thread, ComputeMode::prohibited,
                        ComputeMode::exclusive_process}) {
    if (compute == compute_mode_name(c)) m.compute = c;
  }
  if (mig == "Enabled") m.mig = true;
  if (mig == "Disabled" || mig == "[N/A]") m.mig = false;  // [N/A]: a GPU without MIG
  return m;
}

DeviceModes NvidiaSmi::modes(std::size_t device) const {
  if (device >= devices_.size()) return {};
  const Result<std::string> out =
      detail::run_capture({program_, "--query-gpu=uuid,compute_mode,mig.mode.current", "--format=csv,noheader"}, 20000);
  if (!out) return {};
  std::string_view text = *out;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view row = text.substr(0, nl);
    if (trimmed(row.substr(0, row.find(','))) == devices_[device].uuid) return modes_of_row(row);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  return {};
}

}  // namespace

Result<std::unique_ptr<Backend>> open_nvidia_smi(const OpenOptions& o) {
  const std::string program = find_program("nvidia-smi", o.path);
  if (program.empty()) return Failure{"no nvidia-smi on PATH"};
  const Result<std::string> out = detail::run_capture(
      {program, "--query-gpu=index,uuid,memory.total,memory.used,name", "--format=csv,noheader,nounits"}, 20000);
  if (!out) return out.failure();
  std::vector<Device> devices;
  std::string_view text = *out;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    smi::GpuRow row;
    if (smi::parse_gpu_row(text.substr(0, nl), row)) {
      Device d;
      d.uuid = row.uuid;
      d.name = row.name;
      d.total = row.total.value_or(0);
      d.vendor_index = row.index;
      devices.push_back(std::move(d));
    }
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  if (devices.empty()) return Failure{"nvidia-smi lists no GPU"};
  auto b = std::make_unique<NvidiaSmi>(program, std::move(devices), o.smi_interval_ms);
  if (Result<void> started = b->start(); !started) return started.failure();
  return std::unique_ptr<Backend>(std::move(b));
}

}  // namespace qprof::gpu::smi_detail
