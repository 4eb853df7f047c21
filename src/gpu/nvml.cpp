// SPDX-License-Identifier: Apache-2.0
// NVIDIA through NVML, loaded at run time with dlopen: no SDK at build time. The few types and
// entry points qprof uses are declared here from their documented layouts (x86-64 and aarch64).
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "common.hpp"
#include "nvml_util.hpp"
#include "qprof/gpu/backend.hpp"
#include "qprof/common/units.hpp"

namespace qprof::gpu {
namespace {

using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;

constexpr nvmlReturn_t kSuccess = 0;
constexpr nvmlReturn_t kNotSupported = 3;
constexpr nvmlReturn_t kNoPermission = 4;
constexpr nvmlReturn_t kInsufficientSize = 7;
constexpr nvmlReturn_t kFunctionNotFound = 13;
constexpr nvmlReturn_t kArgumentVersionMismatch = 25;

struct nvmlMemory_t {
  unsigned long long total, free, used;
};
struct nvmlMemory_v2_t {
  unsigned int version;
  unsigned long long total, reserved, free, used;
};
static_assert(sizeof(nvmlMemory_t) == 24);
static_assert(sizeof(nvmlMemory_v2_t) == 40);
// NVML_STRUCT_VERSION(Memory, 2): the struct's size with the version in the top byte, not "2".
constexpr unsigned int kMemoryV2Version = sizeof(nvmlMemory_v2_t) | (2u << 24);
static_assert(kMemoryV2Version == 0x02000028);

constexpr unsigned long long kNotAvailable = ULLONG_MAX;  // usedGpuMemory without a figure
constexpr unsigned int kNoInstance = 0xFFFFFFFFu;         // gpu/computeInstanceId without MIG
constexpr unsigned long long kMaxPid = 4194304;           // PID_MAX_LIMIT
constexpr unsigned kFirstCapacity = 64;
constexpr unsigned char kCanary = 0xA5;

using InitFn = nvmlReturn_t (*)();
using ErrorStringFn = const char* (*)(nvmlReturn_t);
using TextFn = nvmlReturn_t (*)(char*, unsigned int);
using CountFn = nvmlReturn_t (*)(unsigned int*);
using HandleByIndexFn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using DeviceTextFn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using MemoryFn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
using MemoryV2Fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_v2_t*);
using ProcessesFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, void*);
using MigModeFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*, unsigned int*);
using MaxMigFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
using MigHandleFn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, nvmlDevice_t*);
using ComputeModeFn = nvmlReturn_t (*)(nvmlDevice_t, int*);

struct Api {
  InitFn init = nullptr;
  const char* init_name = "";
  InitFn shutdown = nullptr;
  ErrorStringFn error_string = nullptr;
  TextFn driver_version = nullptr;
  CountFn count = nullptr;
  HandleByIndexFn handle_by_index = nullptr;
  DeviceTextFn uuid = nullptr;
  DeviceTextFn name = nullptr;
  MemoryFn memory = nullptr;
  MemoryV2Fn memory_v2 = nullptr;
  ProcessesFn compute[4] = {};  // by version: [1] unversioned, [2] _v2, [3] _v3
  ProcessesFn graphics[4] = {};
  MigModeFn mig_mode = nullptr;
  MaxMigFn max_mig = nullptr;
  MigHandleFn mig_handle = nullptr;
  ComputeModeFn compute_mode = nullptr;
};

template <class F>
F sym(void* lib, const char* name) {
  return reinterpret_cast<F>(::dlsym(lib, name));
}

// Bytes of one entry as each call writes it; _v3 of early R535 drivers wrote 32.
std::size_t entry_size(int version) { return version == 1 ? 16 : 24; }

struct Entry {
  pid_t pid;
  unsigned long long bytes;
};

class NvmlBackend final : public Backend {
 public:
  NvmlBackend(void* lib, const Api& api, std::string library) : lib_(lib), api_(api), library_(std::move(library)) {
    for (int v = 3; v >= 1; --v) {
      if (api_.compute[v] && compute_version_ == 0) compute_version_ = v;
      if (api_.graphics[v] && graphics_version_ == 0) graphics_version_ = v;
    }
    mem_v2_ = api_.memory_v2 != nullptr;
  }
  ~NvmlBackend() override {
    if (api_.shutdown) api_.shutdown();
    ::dlclose(lib_);
  }

  Result<void> discover();

  std::string_view name() const override { return "nvml"; }
  std::string description() const override;
  const std::vector<Device>& devices() const override { return devices_; }
  bool device_used(std::span<Bytes> used) noexcept override;
  bool process_usage(std::span<const pid_t> pids, std::span<DeviceProcesses> out) noexcept override;
  bool device_util(std::span<const pid_t> pids, std::span<DeviceUtil> out) noexcept override {
    return util_.device_util(pids, out);
  }
  bool pcie_throughput(std::span<DeviceUtil> out) noexcept override { return util_.pcie_throughput(out); }
  bool lists_every_process() const override { return true; }
  bool cuda_devices() const override { return true; }
  void take_warnings(std::vector<std::string>& out) override { warnings_.take(out); }
  DeviceModes modes(std::size_t device) const override;

  std::string error(nvmlReturn_t rc) const {
    const char* s = api_.error_string ? api_.error_string(rc) : nullptr;
    return std::string(s ? s : "error") + " (" + std::to_string(rc) + ")";
  }

 private:
  void add_device(nvmlDevice_t h, int vendor_index, const std::string& parent);
  // `refused`, when given, is set to the driver's answer when it refused the list (unavailable).
  DeviceProcesses::Status fetch(nvmlDevice_t h, bool graphics, Bytes total, std::size_t dev,
                                nvmlReturn_t* refused = nullptr);
  bool parse_entries(unsigned n, std::size_t stride, Bytes total);

  void* lib_;
  Api api_;
  std::string library_;
  std::string driver_;
  std::vector<Device> devices_;
  std::vector<nvmlDevice_t> handles_;
  std::atomic<bool> mem_v2_{false};
  int compute_version_ = 0;  // process thread only
  int graphics_version_ = 0;
  std::vector<unsigned char> buf_;
  unsigned capacity_ = kFirstCapacity;
  std::vector<Entry> parsed_;   // one call's entries
  std::vector<Entry> entries_;  // one device's entries, both lists
  detail::Warnings warnings_;
  detail::NvmlUtil util_;  // busy time: utilisation rates, process utilisation, PCIe
};

void NvmlBackend::add_device(nvmlDevice_t h, int vendor_index, const std::string& parent) {
  Device d;
  char text[256] = {};
  if (api_.uuid(h, text, sizeof text) == kSuccess) d.uuid = text;
  std::memset(text, 0, sizeof text);
  if (api_.name && api_.name(h, text, sizeof text) == kSuccess) d.name = text;
  if (d.name.empty()) d.name = "NVIDIA GPU";
  nvmlMemory_t m{};
  nvmlMemory_v2_t m2{};
  m2.version = kMemoryV2Version;
  if (api_.memory_v2 && api_.memory_v2(h, &m2) == kSuccess) {
    d.total = m2.total;
  } else if (api_.memory && api_.memory(h, &m) == kSuccess) {
    d.total = m.total;
  }
  if (d.uuid.empty())
    d.uuid = "nvml-" + std::to_string(vendor_index) + (parent.empty() ? "" : "-mig" + std::to_string(devices_.size()));
  d.vendor_index = vendor_index;
  d.parent_uuid = parent;
  devices_.push_back(std::move(d));
  handles_.push_back(h);
}

Result<void> NvmlBackend::discover() {
  char version[96] = {};
  if (api_.driver_version && api_.driver_version(version, sizeof version) == kSuccess) driver_ = version;
  unsigned int count = 0;
  const nvmlReturn_t rc = api_.count(&count);
  if (rc != kSuccess) return Failure{"nvmlDeviceGetCount: " + error(rc)};
  for (unsigned int i = 0; i < count; ++i) {
    nvmlDevice_t h = nullptr;
    if (const nvmlReturn_t r = api_.handle_by_index(i, &h); r != kSuccess) {
      warnings_.once("handle" + std::to_string(i), "NVML: GPU " + std::to_string(i) + " cannot be opened: " + error(r));
      continue;
    }
    // MIG: the memory and processes of each MIG device; the physical GPU only without them.
    unsigned int current = 0, pending = 0, max_mig = 0;
    const std::size_t before = devices_.size();
    if (api_.mig_mode && api_.max_mig && api_.mig_handle && api_.mig_mode(h, &current, &pending) == kSuccess &&
        current == 1 && api_.max_mig(h, &max_mig) == kSuccess) {
      char parent[256] = {};
      api_.uuid(h, parent, sizeof parent);
      for (unsigned int j = 0; j < max_mig; ++j) {
        nvmlDevice_t mig = nullptr;
        if (api_.mig_handle(h, j, &mig) == kSuccess) add_device(mig, static_cast<int>(i), parent);
      }
    }
    if (devices_.size() == before) add_device(h, static_cast<int>(i), "");
  }
  if (devices_.empty()) {
    return Failure{count == 0 ? "NVML sees no GPU" : "NVML cannot open any of its " + std::to_string(count) + " GPUs"};
  }
  util_.open(lib_, std::vector<void*>(handles_.begin(), handles_.end()));
  buf_.resize(capacity_ * 32);
  parsed_.reserve(capacity_);
  entries_.reserve(capacity_ * 2);
  return {};
}

DeviceModes NvmlBackend::modes(std::size_t device) const {
  DeviceModes m;
  if (device >= handles_.size()) return m;
  int mode = 0;
  // nvmlComputeMode_t: 0 default, 1 exclusive thread (gone since CUDA 8), 2 prohibited, 3 exclusive process.
  if (api_.compute_mode && api_.compute_mode(handles_[device], &mode) == kSuccess && mode >= 0 && mode <= 3)
    m.compute = static_cast<ComputeMode>(mode);
  unsigned int current = 0, pending = 0;
  if (!devices_[device].parent_uuid.empty()) {
    m.mig = true;  // a MIG device: its GPU has MIG on
  } else if (api_.mig_mode && api_.mig_mode(handles_[device], &current, &pending) == kSuccess) {
    m.mig = current == 1;
  } else if (api_.mig_mode) {
    m.mig = false;  // NOT_SUPPORTED: a GPU without MIG
  }
  return m;
}

std::string NvmlBackend::description() const {
  std::string s = "NVML";
  if (!driver_.empty()) s += ", driver " + driver_;
  return s + " (" + library_ + "): " + detail::describe(devices_);
}

bool NvmlBackend::device_used(std::span<Bytes> used) noexcept {
  bool any = false;
  for (std::size_t i = 0; i < handles_.size() && i < used.size(); ++i) {
    used[i] = kUnknown;
    if (mem_v2_.load(std::memory_order_relaxed)) {
      nvmlMemory_v2_t m{};
      m.version = kMemoryV2Version;
      const nvmlReturn_t rc = api_.memory_v2(handles_[i], &m);
      if (rc == kSuccess) {
        used[i] = m.used;
        any = true;
        continue;
      }
      if (rc == kFunctionNotFound || rc == kArgumentVersionMismatch || rc == kNotSupported) {
        mem_v2_.store(false, std::memory_order_relaxed);  // an older driver: the first version from now on
      }
    }
    if (!api_.memory) continue;
    nvmlMemory_t m{};
    if (api_.memory(handles_[i], &m) == kSuccess) {
      used[i] = m.used;
      any = true;
    }
  }
  return any;
}

// Reads the n entries of buf_ at `stride` into parsed_; false when they do not look like
// process entries (PIDs beyond PID_MAX_LIMIT, more memory than the device has, instance ids
// that are neither "none" nor small).
bool NvmlBackend::parse_entries(unsigned n, std::size_t stride, Bytes total) {
  parsed_.clear();
  const Bytes limit = total > 0 ? total : (Bytes{1} << 50);
  for (unsigned i = 0; i < n; ++i) {
    const unsigned char* e = buf_.data() + std::size_t{i} * stride;
    unsigned int pid = 0;
    unsigned long long bytes = 0;
    std::memcpy(&pid, e, 4);
    std::memcpy(&bytes, e + 8, 8);
    if (pid == 0 || pid > kMaxPid) return false;
    if (bytes != kNotAvailable && bytes > limit) return false;
    if (stride >= 24) {
      unsigned int gi = 0, ci = 0;
      std::memcpy(&gi, e + 16, 4);
      std::memcpy(&ci, e + 20, 4);
      if ((gi != kNoInstance && gi > 1024) || (ci != kNoInstance && ci > 1024)) return false;
    }
    parsed_.push_back({static_cast<pid_t>(pid), bytes});
  }
  return true;
}

DeviceProcesses::Status NvmlBackend::fetch(nvmlDevice_t h, bool graphics, Bytes total, std::size_t dev,
                                           nvmlReturn_t* refused) {
  using Status = DeviceProcesses::Status;
  int& version = graphics ? graphics_version_ : compute_version_;
  const char* kind = graphics ? "graphics" : "compute";
  for (int attempt = 0; attempt < 8 && version > 0; ++attempt) {
    ProcessesFn fn = graphics ? api_.graphics[version] : api_.compute[version];
    // Room for 32-byte entries whatever the version, and a canary to see how far a call wrote.
    const std::size_t bytes = std::size_t{capacity_} * 32;
    if (buf_.size() < bytes) buf_.resize(bytes);
    std::memset(buf_.data(), kCanary, bytes);
    unsigned int count = capacity_;
    const nvmlReturn_t rc = fn(h, &count, buf_.data());
    if (rc == kSuccess) {
      const unsigned n = std::min(count, capacity_);
      std::size_t stride = entry_size(version);
      if (version == 3 && n > 0) {
        // Early R535 drivers wrote 32-byte entries from _v3: then the bytes past n 24-byte
        // entries are no longer the canary.
        bool untouched = true;
        for (std::size_t b = std::size_t{n} * 24; b < std::size_t{n} * 32; ++b)
          untouched = untouched && buf_[b] == kCanary;
        if (!untouched) stride = 32;
      }
      bool ok = parse_entries(n, stride, total);
      if (!ok && version == 3) {
        stride = stride == 24 ? 32 : 24;
        ok = parse_entries(n, stride, total);
      }
      if (!ok) {
        warnings_.once(std::string("garbled-") + kind,
                       std::string("NVML: the ") + kind + " process list of " + devices_[dev].uuid +
                           " does not parse (a driver bug?); its processes are not counted");
        return Status::failed;
      }
      if (stride == 32) {
        warnings_.once("stride32",
                       "NVML: this driver writes 32-byte process entries from _v3 (an R535 bug); read as such");
      }
      for (const Entry& e : parsed_) entries_.push_back(e);
      return Status::ok;
    }
    if (rc == kInsufficientSize) {
      // The needed count is in `count`; more processes may start before the next call.
      capacity_ = std::max({count + 16, capacity_ * 2, kFirstCapacity});
      buf_.resize(std::size_t{capacity_} * 32);
      parsed_.reserve(capacity_);
      continue;
    }
    if (rc == kFunctionNotFound || rc == kArgumentVersionMismatch) {
      // The library has the symbol but the driver not the call: the previous version from now on.
      do {
        --version;
      } while (version > 0 && !(graphics ? api_.graphics[version] : api_.compute[version]));
      continue;
    }
    if (rc == kNoPermission || rc == kNotSupported) {
      if (refused) *refused = rc;
      if (!graphics) {
        warnings_.once(std::string("denied-") + devices_[dev].uuid,
                       "NVML: the processes of " + devices_[dev].uuid + " cannot be listed: " + error(rc));
      }
      return Status::unavailable;
    }
    warnings_.once(
        std::string("fail-") + kind + devices_[dev].uuid,
        std::string("NVML: listing the ") + kind + " processes of " + devices_[dev].uuid + " failed: " + error(rc));
    return Status::failed;
  }
  return Status::failed;
}

bool NvmlBackend::process_usage(std::span<const pid_t> pids, std::span<DeviceProcesses> out) noexcept {
  using Status = DeviceProcesses::Status;
  bool any = false;
  try {
    for (std::size_t i = 0; i < handles_.size() && i < out.size(); ++i) {
      DeviceProcesses& r = out[i];
      r = DeviceProcesses{};
      entries_.clear();
      // The compute list decides; the graphics list (refused on compute-only GPUs) only adds.
      r.status = fetch(handles_[i], false, devices_[i].total, i);
      if (r.status != Status::ok) continue;
      // Every tenant is seen when the graphics list was read too, or does not exist here (a
      // compute-only GPU answers Not Supported); not when it failed or was refused to us.
      nvmlReturn_t refused = kSuccess;
      const Status graphics =
          graphics_version_ > 0 ? fetch(handles_[i], true, devices_[i].total, i, &refused) : Status::failed;
      r.every_tenant = graphics == Status::ok || (graphics == Status::unavailable && refused == kNotSupported);
      any = true;
      // A PID on both lists (or twice on one) counts once, with its larger figure.
      std::sort(entries_.begin(), entries_.end(), [](const Entry& a, const Entry& b) {
        return a.pid != b.pid ? a.pid < b.pid
                              : (a.bytes == kNotAvailable ? 0 : a.bytes) > (b.bytes == kNotAvailable ? 0 : b.bytes);
      });
      for (std::size_t k = 0; k < entries_.size(); ++k) {
        if (k > 0 && entries_[k].pid == entries_[k - 1].pid) continue;
        ++r.listed;
        if (!detail::has_pid(pids, entries_[k].pid)) continue;
        ++r.matched;
        if (entries_[k].bytes == kNotAvailable) {
          ++r.unknown;
        } else {
          r.tree += entries_[k].bytes;
        }
      }
    }
  } catch (...) {  // a failed allocation: this query is lost, the next one may do better
    return false;
  }
  return any;
}

std::string nvml_library_name(const OpenOptions& o) {
  if (!o.nvml_library.empty()) return o.nvml_library;
  const char* env = std::getenv("QPROF_NVML_LIBRARY");
  return env && *env ? env : "libnvidia-ml.so.1";
}

}  // namespace

bool nvml_library_loads(const OpenOptions& o) {
  // Kept loaded (never dlclose'd): open_nvml finds it so, without a second load.
  return ::dlopen(nvml_library_name(o).c_str(), RTLD_NOW | RTLD_LOCAL) != nullptr;
}

Result<std::unique_ptr<Backend>> open_nvml(const OpenOptions& o) {
  const std::string library = nvml_library_name(o);
  ::dlerror();
  void* lib = ::dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char* e = ::dlerror();
    return Failure{"cannot load " + library + (e ? std::string(": ") + e : std::string())};
  }
  Api a;
  a.init = sym<InitFn>(lib, "nvmlInit_v2");
  a.init_name = "nvmlInit_v2";
  if (!a.init) {
    a.init = sym<InitFn>(lib, "nvmlInit");
    a.init_name = "nvmlInit";
  }
  a.shutdown = sym<InitFn>(lib, "nvmlShutdown");
  a.error_string = sym<ErrorStringFn>(lib, "nvmlErrorString");
  a.driver_version = sym<TextFn>(lib, "nvmlSystemGetDriverVersion");
  a.count = sym<CountFn>(lib, "nvmlDeviceGetCount_v2");
  if (!a.count) a.count = sym<CountFn>(lib, "nvmlDeviceGetCount");
  a.handle_by_index = sym<HandleByIndexFn>(lib, "nvmlDeviceGetHandleByIndex_v2");
  if (!a.handle_by_index) a.handle_by_index = sym<HandleByIndexFn>(lib, "nvmlDeviceGetHandleByIndex");
  a.uuid = sym<DeviceTextFn>(lib, "nvmlDeviceGetUUID");
  a.name = sym<DeviceTextFn>(lib, "nvmlDeviceGetName");
  a.memory = sym<MemoryFn>(lib, "nvmlDeviceGetMemoryInfo");
  a.memory_v2 = sym<MemoryV2Fn>(lib, "nvmlDeviceGetMemoryInfo_v2");
  a.compute[1] = sym<ProcessesFn>(lib, "nvmlDeviceGetComputeRunningProcesses");
  a.compute[2] = sym<ProcessesFn>(lib, "nvmlDeviceGetComputeRunningProcesses_v2");
  a.compute[3] = sym<ProcessesFn>(lib, "nvmlDeviceGetComputeRunningProcesses_v3");
  a.graphics[1] = sym<ProcessesFn>(lib, "nvmlDeviceGetGraphicsRunningProcesses");
  a.graphics[2] = sym<ProcessesFn>(lib, "nvmlDeviceGetGraphicsRunningProcesses_v2");
  a.graphics[3] = sym<ProcessesFn>(lib, "nvmlDeviceGetGraphicsRunningProcesses_v3");
  a.mig_mode = sym<MigModeFn>(lib, "nvmlDeviceGetMigMode");
  a.max_mig = sym<MaxMigFn>(lib, "nvmlDeviceGetMaxMigDeviceCount");
  a.mig_handle = sym<MigHandleFn>(lib, "nvmlDeviceGetMigDeviceHandleByIndex");
  a.compute_mode = sym<ComputeModeFn>(lib, "nvmlDeviceGetComputeMode");

  const char* missing = !a.init                                             ? "nvmlInit"
                        : !a.count                                          ? "nvmlDeviceGetCount"
                        : !a.handle_by_index                                ? "nvmlDeviceGetHandleByIndex"
                        : !a.uuid                                           ? "nvmlDeviceGetUUID"
                        : (!a.memory && !a.memory_v2)                       ? "nvmlDeviceGetMemoryInfo"
                        : (!a.compute[1] && !a.compute[2] && !a.compute[3]) ? "nvmlDeviceGetComputeRunningProcesses"
                                                                            : nullptr;
  if (missing) {
    ::dlclose(lib);
    return Failure{library + " has no " + missing + ": not NVML?"};
  }
  if (const nvmlReturn_t rc = a.init(); rc != kSuccess) {
    const char* s = a.error_string ? a.error_string(rc) : nullptr;
    Failure failed{std::string(a.init_name) + " failed: " + (s ? s : "error") + " (" + std::to_string(rc) + ")"};
    ::dlclose(lib);
    return failed;
  }
  auto backend = std::make_unique<NvmlBackend>(lib, a, library);  // owns lib and the init from here
  try {
    if (Result<void> found = backend->discover(); !found) return found.failure();
  } catch (const std::exception& e) {
    return Failure{std::string("NVML: ") + e.what()};
  }
  return std::unique_ptr<Backend>(std::move(backend));
}

}  // namespace qprof::gpu
