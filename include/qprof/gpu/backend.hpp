// SPDX-License-Identifier: Apache-2.0
// GPU memory of the tree and of whole devices, behind one small interface with one backend per
// source (nvtop's habit): NVML loaded with dlopen (gpu_nvml), the kernel's DRM fdinfo plus KFD and
// amdgpu sysfs for AMD and Intel (gpu_drm), and nvidia-smi / rocm-smi as the last resort
// (gpu_smi). No vendor SDK at build time: one binary for every machine. GpuSampler
// (gpu_sampler.hpp) turns a backend into trace lines on the run loop's schedule.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "qprof/common/failure.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof::gpu {

// A value a backend could not read.
inline constexpr Bytes kUnknown = ~Bytes{0};

struct Device {
  std::string uuid;  // the key: GPU-…/MIG-… (NVIDIA), the PCI address (AMD, Intel)
  std::string name;
  Bytes total = 0;          // capacity; 0 when unknown
  int vendor_index = -1;    // NVIDIA: NVML index of the physical GPU (a MIG device: its parent's)
  std::string parent_uuid;  // a MIG device: its physical GPU's UUID; empty otherwise
};

// What one process query found on one device.
struct DeviceProcesses {
  enum class Status : std::uint8_t {
    ok,           // the figures below are the device's process list
    unavailable,  // the device would not list processes (no permission, not supported)
    failed,       // the query failed this time (an error, a driver hiccup)
  };
  Status status = Status::failed;
  Bytes tree = 0;             // Σ memory of the listed processes that are the tree's
  std::uint32_t listed = 0;   // processes the device listed, every tenant
  std::uint32_t matched = 0;  // of them, the tree's
  std::uint32_t unknown = 0;  // of the tree's, those whose memory was not available
  // Both lists were read (or the graphics list is not supported: a compute-only GPU has none),
  // so `listed` counts every process with a context on the device.
  bool every_tenant = false;
};

// How busy a device was (GPUUTIL lines). Percentages 0–100; PCIe in bytes per second.
struct DeviceUtil {
  bool valid = false;               // busy and mem_bw were read
  double busy = 0;                  // NVML utilization.gpu, amdgpu gpu_busy_percent
  double mem_bw = 0;                // NVML utilization.memory, amdgpu mem_busy_percent
  std::optional<double> tree_busy;  // the tree's share of that busy % (kernels and copies)
  std::optional<double> pcie_rx, pcie_tx;
  // Set by the caller from the device's latest process list. The per-process call that tells
  // the tree's share costs milliseconds a device on a real driver (bench/nvml_probe.py), on every
  // GPU of a node, so it is made only where the device is shared: where the tree has no
  // process, its share is 0; where every process is the tree's, its share is the device's.
  enum class Tenancy : std::uint8_t {
    unknown,  // the list could not be read: ask
    absent,   // no process of the tree
    shared,   // the tree's and others'
    alone,    // the tree's only
  };
  Tenancy tenancy = Tenancy::unknown;
};

// How a device may be shared: CUDA MPS clients (qprof fit --gpu) need the default compute mode
// and MIG off.
enum class ComputeMode { default_mode, exclusive_thread, prohibited, exclusive_process };
const char* compute_mode_name(ComputeMode m);  // "Default", "Exclusive_Thread", … as nvidia-smi says
struct DeviceModes {
  std::optional<ComputeMode> compute;  // nullopt: the backend cannot tell
  std::optional<bool> mig;             // MIG mode on; nullopt: cannot tell
};

// One source of GPU figures. Devices are fixed when the backend opens. device_used() and
// process_usage() may run at the same time on two threads, never one of them on two threads at
// once; neither throws.
class Backend {
 public:
  virtual ~Backend() = default;
  // "nvml", "amd", "nvidia-smi", "rocm-smi".
  virtual std::string_view name() const = 0;
  // One line for the run's message: what it is and what it found.
  virtual std::string description() const = 0;
  virtual const std::vector<Device>& devices() const = 0;
  // The fast query: every device's current total use into used[i] (kUnknown where unknown).
  // `used` has devices().size() elements. Returns false when nothing could be read.
  virtual bool device_used(std::span<Bytes> used) noexcept = 0;
  // The slow query: the memory the processes `pids` (ascending, unique) hold on each device.
  // `out` has devices().size() elements. Returns false when nothing could be read.
  virtual bool process_usage(std::span<const pid_t> pids, std::span<DeviceProcesses> out) noexcept = 0;
  // How busy each device is, with the tree's own SM share where the driver gives it; runs with
  // the process queries (helper thread, same budget). `out` has devices().size() elements.
  // Returns false when the backend has no such figures.
  virtual bool device_util(std::span<const pid_t> pids, std::span<DeviceUtil> out) noexcept {
    (void)pids;
    (void)out;
    return false;
  }
  // PCIe throughput into out[i].pcie_rx/pcie_tx. Slow (NVML samples each counter over 20 ms),
  // so the sampler asks on a schedule of its own. Returns false when not available.
  virtual bool pcie_throughput(std::span<DeviceUtil> out) noexcept {
    (void)out;
    return false;
  }
  // True when a process list shows every tenant of a device (NVML, nvidia-smi), so that a list
  // without any of the tree's PIDs says something (a PID namespace); false when the backend
  // only looks at the tree's own processes (fdinfo).
  virtual bool lists_every_process() const = 0;
  // True for NVIDIA backends: CUDA_VISIBLE_DEVICES speaks of their devices.
  virtual bool cuda_devices() const = 0;
  // Warnings the backend found while querying (each said once), appended to `out`. Called from
  // the sampler's thread.
  virtual void take_warnings(std::vector<std::string>& out) { (void)out; }
  // Processes the backend keeps running as qprof's children (nvidia-smi -lms, the rocm-smi
  // shell): the run loop reaps every child, and must not count these as the tree's.
  virtual std::vector<pid_t> helper_pids() const { return {}; }
  // The compute and MIG modes of devices()[device], read when asked (a driver call, or one
  // nvidia-smi query); unknown where the backend has no such figures.
  virtual DeviceModes modes(std::size_t device) const {
    (void)device;
    return {};
  }
};

// --gpu
enum class Choice { automatic, nvml, amd, smi, none };
std::optional<Choice> parse_choice(std::string_view text);  // auto|nvml|amd|smi|none
std::string_view choice_name(Choice c);

struct OpenOptions {
  // NVML library: empty means $QPROF_NVML_LIBRARY if set, else "libnvidia-ml.so.1" through the
  // loader's search (LD_LIBRARY_PATH, the cache, …).
  std::string nvml_library;
  std::string proc_root = "/proc";
  std::string sys_root = "/sys";
  // Searched for nvidia-smi and rocm-smi; empty: $PATH.
  std::string path;
  // The loop period asked of nvidia-smi -lms and the pace of rocm-smi queries.
  std::int64_t smi_interval_ms = 100;
  // --gpu auto tries no backend that starts a process (smi): set where the backend opens beside
  // the command, after the tree was primed (a helper started then would be taken for the tree's).
  bool no_helpers = false;
};

// Each backend's opener: the backend, or the Failure that says why it does not work here (no
// library, no device…). A failed allocation may still throw: open_backend catches it.
Result<std::unique_ptr<Backend>> open_nvml(const OpenOptions& o);
bool nvml_library_loads(const OpenOptions& o);  // dlopen alone, no nvmlInit: a few milliseconds
Result<std::unique_ptr<Backend>> open_amd(const OpenOptions& o);
Result<std::unique_ptr<Backend>> open_smi(const OpenOptions& o);

struct Selection {
  std::unique_ptr<Backend> backend;  // nullptr: no GPU figures (a normal case)
  std::string message;               // one line, always: what was chosen, or why none
  bool failed_request = false;       // an explicit --gpu other than none/auto found nothing
};

// --gpu auto tries nvml, amd, smi in that order and takes the first that works. Never throws.
// Open the backend before ProcTree::prime(): the smi backend starts helper processes that are
// qprof's children and must be known as outsiders of the tree.
Selection open_backend(Choice choice, const OpenOptions& options = {});

// Whether `choice` opens without starting a process, so that it may open on a thread of its own
// beside the command (options.no_helpers then set): nvml and amd; auto where NVML's library
// loads, NVML's start (nvmlInit: tens of milliseconds) being what delays a job, and nvidia-smi,
// which auto would try after it, reading the same driver. The library stays loaded.
bool opens_without_helpers(Choice choice, const OpenOptions& options = {});

// CUDA_VISIBLE_DEVICES → which of `devices` the job may see, as CUDA reads it: comma-separated
// indices or GPU-/MIG- UUIDs (unique prefixes allowed), parsing stops at the first invalid entry,
// an empty value hides every device. Indices count physical GPUs in CUDA's order, which is
// NVML's (PCI bus) order only with CUDA_DEVICE_ORDER=PCI_BUS_ID or when every GPU is the same
// model; otherwise they cannot be mapped and every device is kept, with a `warning`. A physical
// GPU selected by index or UUID brings its MIG devices. nullopt value: every device.
std::vector<bool> visible_devices(const std::vector<Device>& devices, std::optional<std::string_view> cuda_visible,
                                  std::optional<std::string_view> cuda_device_order, std::string* warning);

}  // namespace qprof::gpu
