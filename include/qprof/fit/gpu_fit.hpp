// SPDX-License-Identifier: Apache-2.0
// qprof fit --gpu[=INDEX]: the smallest device memory a job runs in. The job runs as a client of
// a private CUDA MPS daemon (mps_daemon.hpp), once without a limit (the baseline: the tree's peak
// on the GPU, from the GPU sampler of `qprof run`), then again and again with
// CUDA_MPS_PINNED_DEVICE_MEM_LIMIT, while LimitSearch bisects between the smallest figure the
// tree held on the device (its context) and that peak. Host memory is not limited.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qprof/common/failure.hpp"
#include "qprof/fit/fit.hpp"
#include "qprof/gpu/backend.hpp"

namespace qprof::fit {

// The GPU a fit runs on, checked: an NVIDIA GPU at that index, MIG off, a compute mode that lets
// MPS clients in, no other MPS daemon answering, nvidia-cuda-mps-control on PATH.
struct GpuTarget {
  int index = 0;
  std::string uuid, name;
  Bytes total = 0;
  std::string backend;  // "nvml" or "smi": the choice each probe's GPU sampler gets
  std::string control;  // nvidia-cuda-mps-control's path
};
// `other_pipe_dirs`: where another daemon would answer (the default /tmp/nvidia-mps and the
// user's CUDA_MPS_PIPE_DIRECTORY).
Result<GpuTarget> check_gpu_target(int index, const gpu::OpenOptions& open,
                                   const std::vector<std::string>& other_pipe_dirs);
// The refusal's words for a device's modes; empty where they let MPS in.
std::string modes_refusal(const gpu::DeviceModes& modes, int index);

// cgroup v2's dmem controller (Linux 6.14 and later, with a driver that registers its memory):
// a cgroup's device memory bounded as memory.max bounds host memory.
struct DmemSupport {
  bool controller = false;           // "dmem" in cgroup.controllers of the root
  std::string kernel;                // the running kernel's release
  bool kernel_new_enough = false;    // 6.14 or later
  std::vector<std::string> regions;  // dmem.capacity's regions (drm/PCI/vram0 …)
};
DmemSupport detect_dmem(const std::string& cgroup_root = "/sys/fs/cgroup",
                        const std::string& osrelease = "/proc/sys/kernel/osrelease");
// One sentence: whether dmem is here, and what each method bounds.
std::string dmem_note(const DmemSupport& d);

// CUDA's and PyTorch's words for an allocation that failed for want of device memory.
inline constexpr std::string_view kCudaOomMessages[] = {"CUDA out of memory", "torch.OutOfMemoryError",
                                                        "cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY"};
// The last line of `stderr_text` holding one of them (cut to 300 bytes), or empty.
std::string cuda_oom_line(std::string_view stderr_text);
// How a probe ended, from its wait status, qprof's deadline and its stderr's OOM line: a job that
// printed CUDA's words and still exited 0 recovered, and completed.
Outcome gpu_outcome_of(int wait_status, bool stopped_as_too_slow, const std::string& oom_line);
// "0=1536M": the limit variable's value for device 0 (the probes see their GPU as device 0),
// in whole MiB.
std::string mps_limit_value(Bytes limit);

// The search itself, into `r` (run_fit calls it for FitOptions::gpu).
void search_gpu_limits(const FitOptions& o, const std::function<void(const Progress&)>& progress, FitReport& r);

}  // namespace qprof::fit
