// The "smi" backend: nvidia-smi or rocm-smi when no library can be loaded.
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "child.hpp"
#include "common.hpp"
#include "qprof/common/clock.hpp"
#include "qprof/gpu/backend.hpp"
#include "qprof/gpu/smi.hpp"
#include "qprof/common/units.hpp"

namespace qprof::gpu {
namespace smi {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Splits at commas; the last field keeps any further commas when `rest_last`.
std::size_t split(std::string_view line, std::string_view* fields, std::size_t max, bool rest_last) {
  std::size_t n = 0;
  while (n < max) {
    const auto comma = (rest_last && n + 1 == max) ? std::string_view::npos : line.find(',');
    fields[n++] = trim(line.substr(0, comma));
    if (comma == std::string_view::npos) return n;
    line = line.substr(comma + 1);
  }
  return n + 1;  // more fields than asked for
}

template <class T>
std::optional<T> number(std::string_view s) {
  s = trim(s);
  T v{};
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// The JSON object in rocm-smi's output, which may have log lines before or after it.
std::optional<nlohmann::json> json_object(std::string_view text) {
  const auto open = text.find('{');
  const auto close = text.rfind('}');
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  nlohmann::json j = nlohmann::json::parse(text.substr(open, close - open + 1), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

std::optional<Bytes> json_bytes(const nlohmann::json& v) {
  if (v.is_number_unsigned()) return v.get<Bytes>();
  if (v.is_number_integer() && v.get<long long>() >= 0) return static_cast<Bytes>(v.get<long long>());
  if (v.is_string()) return number<Bytes>(v.get<std::string>());
  return std::nullopt;
}

std::string json_text(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return v.dump();
  return {};
}

}  // namespace

std::optional<Bytes> parse_mib(std::string_view field) {
  const auto mib = number<Bytes>(field);
  if (!mib || *mib > (~Bytes{0} >> 20)) return std::nullopt;
  return *mib << 20;
}

bool parse_gpu_row(std::string_view line, GpuRow& out) {
  std::string_view f[5];
  if (split(line, f, 5, true) != 5) return false;
  const auto index = number<int>(f[0]);
  if (!index || f[1].empty()) return false;
  out.index = *index;
  out.uuid = std::string(f[1]);
  out.total = parse_mib(f[2]);
  out.used = parse_mib(f[3]);
  out.name = std::string(f[4]);
  return true;
}

bool parse_used_row(std::string_view line, std::string& uuid, std::optional<Bytes>& used) {
  std::string_view f[2];
  if (split(line, f, 2, false) != 2 || f[0].empty() || f[0].front() == '[') return false;
  uuid = std::string(f[0]);
  used = parse_mib(f[1]);
  return true;
}

bool parse_app_row(std::string_view line, AppRow& out) {
  std::string_view f[3];
  if (split(line, f, 3, false) != 3) return false;
  const auto pid = number<pid_t>(f[0]);
  if (!pid || *pid <= 0 || f[1].empty()) return false;
  out.pid = *pid;
  out.uuid = std::string(f[1]);
  out.used = parse_mib(f[2]);
  return true;
}

std::optional<std::vector<RocmCard>> parse_rocm_meminfo(std::string_view text) {
  const auto j = json_object(text);
  if (!j) return std::nullopt;
  std::vector<RocmCard> cards;
  for (const auto& [key, value] : j->items()) {
    if (!key.starts_with("card") || !value.is_object()) continue;
    RocmCard c;
    c.key = key;
    for (const auto& [k, v] : value.items()) {
      const std::string name = lower(k);
      // "VRAM Total Memory (B)" (ROCm 5, 6), "vram Total Memory (B)" (ROCm 4).
      if (name.find("total used memory") != std::string::npos) {
        c.used = json_bytes(v);
      } else if (name.find("total memory") != std::string::npos) {
        c.total = json_bytes(v);
      } else if (name == "pci bus") {
        c.bus = json_text(v);
      } else if (name == "card series" || (c.name.empty() && name == "card model")) {
        c.name = json_text(v);
      }
    }
    cards.push_back(std::move(c));
  }
  std::sort(cards.begin(), cards.end(), [](const RocmCard& a, const RocmCard& b) {
    return a.key.size() != b.key.size() ? a.key.size() < b.key.size() : a.key < b.key;
  });
  return cards;
}

std::optional<std::vector<RocmProcess>> parse_rocm_pids(std::string_view text) {
  std::vector<RocmProcess> out;
  if (trim(text).empty()) return out;  // nothing printed: no processes
  const auto j = json_object(text);
  if (!j) {
    // "No KFD PIDs currently running" without any JSON
    if (text.find("No KFD PIDs") != std::string_view::npos) return out;
    return std::nullopt;
  }
  auto scan = [&](const nlohmann::json& obj) {
    for (const auto& [key, value] : obj.items()) {
      if (!key.starts_with("PID")) continue;
      const auto pid = number<pid_t>(std::string_view(key).substr(3));
      if (!pid || *pid <= 0) continue;
      RocmProcess p;
      p.pid = *pid;
      // "name, gpus, vram, sdma, cu": the name may itself hold ", " (spaces became commas), so
      // count from the end.
      const std::string v = json_text(value);
      std::vector<std::string_view> fields;
      std::string_view rest = v;
      for (;;) {
        const auto comma = rest.find(',');
        fields.push_back(trim(rest.substr(0, comma)));
        if (comma == std::string_view::npos) break;
        rest = rest.substr(comma + 1);
      }
      if (fields.size() >= 5) {
        const std::size_t n = fields.size();
        p.vram = number<Bytes>(fields[n - 3]);
        p.gpus = number<int>(fields[n - 4]).value_or(0);
      }
      out.push_back(p);
    }
  };
  scan(*j);
  if (j->contains("system") && (*j)["system"].is_object()) scan((*j)["system"]);
  std::sort(out.begin(), out.end(), [](const RocmProcess& a, const RocmProcess& b) { return a.pid < b.pid; });
  return out;
}

}  // namespace smi

namespace {

using detail::Child;

std::int64_t ms(std::int64_t n) { return n * 1'000'000; }

// A thread that polls children's stdout until stop; subclasses handle lines and timeouts.
class PollingBackend : public Backend {
 public:
  ~PollingBackend() override = default;
  void take_warnings(std::vector<std::string>& out) override { warnings_.take(out); }
  // The latest device totals the reader thread parsed.
  bool device_used(std::span<Bytes> used) noexcept override {
    std::lock_guard<std::mutex> lock(mu_);
    bool any = false;
    for (std::size_t i = 0; i < used.size() && i < used_.size(); ++i) {
      used[i] = used_[i];
      any = any || used_[i] != kUnknown;
    }
    return any;
  }

 protected:
  void start_thread() {
    if (::pipe2(wake_, O_CLOEXEC | O_NONBLOCK) != 0) wake_[0] = wake_[1] = -1;
    thread_ = std::thread([this] { loop(); });
  }
  void stop_thread() {
    quit_ = true;
    if (wake_[1] >= 0) [[maybe_unused]] auto n = ::write(wake_[1], "x", 1);
    if (thread_.joinable()) thread_.join();
    for (int& fd : wake_) {
      if (fd >= 0) ::close(fd);
      fd = -1;
    }
  }
  // Children whose output the thread reads, and what to do.
  virtual std::vector<Child*> children() = 0;
  virtual void on_output(std::size_t child, std::int64_t now) = 0;  // read its lines now
  virtual void on_tick(std::int64_t now) = 0;
  virtual int poll_ms() const = 0;

  detail::Warnings warnings_;
  std::atomic<bool> quit_{false};
  mutable std::mutex mu_;     // guards used_ and the derived backend's latest lists
  std::vector<Bytes> used_;   // per device; kUnknown where unknown

 private:
  void loop() {
    std::vector<pollfd> fds;
    while (!quit_) {
      const std::vector<Child*> kids = children();
      fds.clear();
      for (Child* c : kids) fds.push_back(pollfd{c->running() && !c->eof() ? c->out_fd() : -1, POLLIN, 0});
      fds.push_back(pollfd{wake_[0], POLLIN, 0});
      ::poll(fds.data(), fds.size(), poll_ms());
      if (quit_) break;
      const std::int64_t now = monotonic_ns();
      for (std::size_t i = 0; i < kids.size(); ++i) {
        if (fds[i].fd >= 0 && (fds[i].revents & (POLLIN | POLLHUP | POLLERR))) on_output(i, now);
      }
      on_tick(now);
    }
  }
  int wake_[2] = {-1, -1};
  std::thread thread_;
};

// ---- nvidia-smi -------------------------------------------------------------------------------

class NvidiaSmi final : public PollingBackend {
 public:
  NvidiaSmi(std::string program, std::vector<Device> devices, std::int64_t interval_ms)
      : program_(std::move(program)), devices_(std::move(devices)), interval_ms_(std::max<std::int64_t>(interval_ms, 20)) {
    used_.assign(devices_.size(), kUnknown);
    apps_.reserve(256);
    pending_.reserve(256);
  }
  ~NvidiaSmi() override {
    stop_thread();
    gpus_.stop();
    apps_child_.stop();
  }

  bool start(std::string& why) {
    const std::string lms = std::to_string(interval_ms_);
    if (!gpus_.start({program_, "--query-gpu=uuid,memory.used", "--format=csv,noheader,nounits", "-lms", lms}, false, why) ||
        !apps_child_.start({program_, "--query-compute-apps=pid,gpu_uuid,used_memory", "--format=csv,noheader,nounits", "-lms", lms},
                           false, why)) {
      return false;
    }
    last_block_ns_ = monotonic_ns();
    start_thread();
    return true;
  }

  std::string_view name() const override { return "nvidia-smi"; }
  std::vector<pid_t> helper_pids() const override { return {gpus_.pid(), apps_child_.pid()}; }
  std::string description() const override {
    return "nvidia-smi -lms " + std::to_string(interval_ms_) + " (" + program_ + "): " + detail::describe(devices_);
  }
  const std::vector<Device>& devices() const override { return devices_; }
  bool lists_every_process() const override { return true; }
  bool cuda_devices() const override { return true; }

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

std::unique_ptr<Backend> open_nvidia_smi(const OpenOptions& o, std::string& why) {
  const std::string program = detail::find_program("nvidia-smi", o.path);
  if (program.empty()) {
    why = "no nvidia-smi on PATH";
    return nullptr;
  }
  std::string out;
  if (!detail::run_capture({program, "--query-gpu=index,uuid,memory.total,memory.used,name", "--format=csv,noheader,nounits"},
                           out, 20000, why)) {
    return nullptr;
  }
  std::vector<Device> devices;
  std::string_view text = out;
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
  if (devices.empty()) {
    why = "nvidia-smi lists no GPU";
    return nullptr;
  }
  auto b = std::make_unique<NvidiaSmi>(program, std::move(devices), o.smi_interval_ms);
  if (!b->start(why)) return nullptr;
  return b;
}

// ---- rocm-smi ---------------------------------------------------------------------------------

constexpr std::string_view kEnd = "@@QPROF-END@@";

// One shell, started with the backend (so before the tree is primed), runs rocm-smi for each
// request line: its rocm-smi children are the shell's, never mistaken for the tree's.
constexpr const char* kRocmLoop =
    "while read -r _; do \"$0\" --showmeminfo vram --json; printf '\\n@@QPROF-END@@\\n'; "
    "\"$0\" --showpids --json; printf '\\n@@QPROF-END@@\\n'; done";

class RocmSmi final : public PollingBackend {
 public:
  RocmSmi(std::string program, std::vector<Device> devices, std::vector<std::string> keys, std::int64_t interval_ms)
      : program_(std::move(program)), devices_(std::move(devices)), keys_(std::move(keys)), interval_ms_(std::max<std::int64_t>(interval_ms, 100)) {
    used_.assign(devices_.size(), kUnknown);
  }
  ~RocmSmi() override {
    stop_thread();
    shell_.stop();
  }

  bool start(std::string& why) {
    if (!shell_.start({"/bin/sh", "-c", kRocmLoop, program_}, true, why)) return false;
    start_thread();
    return true;
  }

  std::string_view name() const override { return "rocm-smi"; }
  std::vector<pid_t> helper_pids() const override { return {shell_.pid()}; }
  std::string description() const override {
    return "rocm-smi (" + program_ + "): " + detail::describe(devices_);
  }
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

std::unique_ptr<Backend> open_rocm_smi(const OpenOptions& o, std::string& why) {
  const std::string program = detail::find_program("rocm-smi", o.path);
  if (program.empty()) {
    why = "no rocm-smi on PATH";
    return nullptr;
  }
  std::string out;
  if (!detail::run_capture({program, "--showmeminfo", "vram", "--showbus", "--showproductname", "--json"}, out, 30000, why)) {
    return nullptr;
  }
  const auto cards = smi::parse_rocm_meminfo(out);
  if (!cards || cards->empty()) {
    why = "rocm-smi lists no GPU";
    return nullptr;
  }
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
  if (!b->start(why)) return nullptr;
  return b;
}

}  // namespace

std::unique_ptr<Backend> open_smi(const OpenOptions& o, std::string& why) {
  std::string nvidia_why, rocm_why;
  if (auto b = open_nvidia_smi(o, nvidia_why)) return b;
  if (auto b = open_rocm_smi(o, rocm_why)) return b;
  why = nvidia_why + ", " + rocm_why;
  return nullptr;
}

}  // namespace qprof::gpu
