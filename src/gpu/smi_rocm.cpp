// SPDX-License-Identifier: Apache-2.0
// The "smi" backend through rocm-smi, and the choice between the two smi tools.
#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>

#include "qprof/common/find_program.hpp"
#include "qprof/common/units.hpp"
#include "qprof/gpu/smi.hpp"
#include "smi_polling.hpp"

namespace qprof::gpu::smi_detail {
namespace {

constexpr std::string_view kEnd = "@@QPROF-END@@";

// One shell, started with the backend (so before the tree is primed), runs rocm-smi for each
// request line: its rocm-smi children are the shell's, never mistaken for the tree's.
constexpr const char* kRocmLoop =
    "while read -r _; do \"$0\" --showmeminfo vram --json; printf '\\n@@QPROF-END@@\\n'; "
    "\"$0\" --showpids --json; printf '\\n@@QPROF-END@@\\n'; done";

class RocmSmi final : public PollingBackend {
 public:
  RocmSmi(std::string program, std::vector<Device> devices, std::vector<std::string> keys, std::int64_t interval_ms)
      : program_(std::move(program)),
        devices_(std::move(devices)),
        keys_(std::move(keys)),
        interval_ms_(std::max<std::int64_t>(interval_ms, 100)) {
    used_.assign(devices_.size(), kUnknown);
  }
  ~RocmSmi() override {
    stop_thread();
    shell_.stop();
  }

  Result<void> start() {
    if (Result<void> started = shell_.start({"/bin/sh", "-c", kRocmLoop, program_}, true); !started) return started;
    start_thread();
    return {};
  }

  std::string_view name() const override { return "rocm-smi"; }
  std::vector<pid_t> helper_pids() const override { return {shell_.pid()}; }
  std::string description() const override { return "rocm-smi (" + program_ + "): " + detail::describe(devices_); }
  const std::vector<Device>& devices() const override { return devices_; }
  bool lists_every_process() const override { return true; }
  bool cuda_devices() const override { return false; }

  bool process_usage(std::span<const pid_t> pids, std::span<DeviceProcesses> out) noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    using Status = DeviceProcesses::Status;
    for (DeviceProcesses& d : out) d = DeviceProcesses{};
    if (!have_pids_) return false;
    // rocm-smi gives a process's VRAM summed over its GPUs: per device only with one device.
    if (devices_.size() != 1) {
      for (DeviceProcesses& d : out) d.status = Status::unavailable;
      warnings_.once("multi", "rocm-smi reports each process's VRAM summed over its GPUs: with " +
                                  std::to_string(devices_.size()) + " GPUs qprof cannot split it per device");
      return true;
    }
    DeviceProcesses& d = out[0];
    d.status = Status::ok;
    for (const smi::RocmProcess& p : pids_) {
      ++d.listed;
      if (!detail::has_pid(pids, p.pid)) continue;
      ++d.matched;
      if (p.vram) {
        d.tree += *p.vram;
      } else {
        ++d.unknown;
      }
    }
    return true;
  }

 private:
  std::vector<Child*> children() override { return {&shell_}; }
  int poll_ms() const override { return 20; }

  void on_output(std::size_t, std::int64_t now) override {
    const bool alive = shell_.read_lines([&](std::string_view line) {
      if (line != kEnd) {
        if (block_.size() > detail::kMaxHelperOutput) block_.clear();  // no end in sight: not an answer
        block_.append(line);
        block_.push_back('\n');
        return;
      }
      if (part_ == 0) {
        if (auto cards = smi::parse_rocm_meminfo(block_)) {
          std::lock_guard<std::mutex> lock(mu_);
          for (const smi::RocmCard& c : *cards) {
            for (std::size_t i = 0; i < keys_.size(); ++i) {
              if (keys_[i] == c.key) used_[i] = c.used.value_or(kUnknown);
            }
          }
        }
        part_ = 1;
      } else {
        if (auto procs = smi::parse_rocm_pids(block_)) {
          std::lock_guard<std::mutex> lock(mu_);
          pids_ = std::move(*procs);
          have_pids_ = true;
        }
        part_ = 0;
        busy_ = false;
        // Paced by its own cost: rocm-smi is a Python program that takes a good part of a second.
        const std::int64_t cost = now - asked_ns_;
        next_ns_ = asked_ns_ + std::max(ms(interval_ms_), static_cast<std::int64_t>(static_cast<double>(cost) / 0.02));
      }
      block_.clear();
    });
    if (!alive) warnings_.once("died", "the rocm-smi helper stopped; GPU figures are frozen from now on");
  }

  void on_tick(std::int64_t now) override {
    if (busy_ || now < next_ns_ || shell_.eof()) return;
    if (!shell_.write("\n")) return;
    busy_ = true;
    asked_ns_ = now;
  }

  std::string program_;
  std::vector<Device> devices_;
  std::vector<std::string> keys_;  // rocm-smi's card key of each device
  std::int64_t interval_ms_;
  Child shell_;
  std::vector<smi::RocmProcess> pids_;
  bool have_pids_ = false;
  // reader thread only
  std::string block_;
  int part_ = 0;
  bool busy_ = false;
  std::int64_t asked_ns_ = 0;
  std::int64_t next_ns_ = 0;
};

}  // namespace

Result<std::unique_ptr<Backend>> open_rocm_smi(const OpenOptions& o) {
  const std::string program = find_program("rocm-smi", o.path);
  if (program.empty()) return Failure{"no rocm-smi on PATH"};
  const Result<std::string> out =
      detail::run_capture({program, "--showmeminfo", "vram", "--showbus", "--showproductname", "--json"}, 30000);
  if (!out) return out.failure();
  const auto cards = smi::parse_rocm_meminfo(*out);
  if (!cards || cards->empty()) return Failure{"rocm-smi lists no GPU"};
  std::vector<Device> devices;
  std::vector<std::string> keys;
  for (const smi::RocmCard& c : *cards) {
    Device d;
    d.uuid = c.bus.empty() ? "rocm-smi-" + c.key : c.bus;
    d.name = c.name.empty() ? "AMD GPU (rocm-smi " + c.key + ")" : c.name;
    d.total = c.total.value_or(0);
    devices.push_back(std::move(d));
    keys.push_back(c.key);
  }
  auto b = std::make_unique<RocmSmi>(program, std::move(devices), std::move(keys), o.smi_interval_ms);
  if (Result<void> started = b->start(); !started) return started.failure();
  return std::unique_ptr<Backend>(std::move(b));
}

}  // namespace qprof::gpu::smi_detail

namespace qprof::gpu {

Result<std::unique_ptr<Backend>> open_smi(const OpenOptions& o) {
  Result<std::unique_ptr<Backend>> nvidia = smi_detail::open_nvidia_smi(o);
  if (nvidia) return nvidia;
  Result<std::unique_ptr<Backend>> rocm = smi_detail::open_rocm_smi(o);
  if (rocm) return rocm;
  return Failure{nvidia.failure().message + ", " + rocm.failure().message};
}

}  // namespace qprof::gpu
