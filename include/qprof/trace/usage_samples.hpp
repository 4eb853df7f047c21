// SPDX-License-Identifier: Apache-2.0
// Series of what the tree holds beyond its RSS total: its memory by kind, its task counts and
// address space, and how busy its GPUs are. Plain data, as the rest of trace.hpp.
#pragma once

#include <cstdint>
#include <optional>

#include "qprof/common/types.hpp"

namespace qprof::trace {

// The tree's RSS by kind (Σ over members of /proc/PID/status RssAnon, RssFile, RssShmem) and
// its swapped-out pages (VmSwap). anon + file + shmem is the tree's RSS at that moment.
struct MemKindsSample {
  Seconds t = 0;
  Bytes anon = 0;   // private and shared anonymous pages (heap, stacks, copy-on-write)
  Bytes file = 0;   // file-backed pages (mapped files, libraries): reclaimable
  Bytes shmem = 0;  // shared memory (/dev/shm, SysV, memfd, shared anonymous maps)
  Bytes swap = 0;   // pages of the tree swapped out

  Bytes rss() const { return anon + file + shmem; }
};

// KINDS and TASKS are read on the stats schedule, Σ RSS on the sampling one. The largest KINDS
// reading is the split of the Σ RSS peak only where it was read near it (within 10 % of it): a
// split of another instant is not shown as the peak's. Σ VSZ holds Σ RSS at every instant, so a
// VSZ peak read below the Σ RSS peak was read away from it and is no VSZ peak. The summary and
// every report go through these two.
inline bool splits_peak(const MemKindsSample& k, Bytes rss_peak) { return k.rss() >= rss_peak - rss_peak / 10; }
inline bool is_vsz_peak(Bytes vsz, Bytes rss_peak) { return vsz >= rss_peak; }

// prmon's remaining series: the tree's process and thread counts and Σ virtual size (VmSize).
struct TasksSample {
  Seconds t = 0;
  std::uint64_t processes = 0;
  std::uint64_t threads = 0;
  Bytes vsz = 0;
};

// How busy one GPU was (NVML utilisation rates, amdgpu gpu_busy_percent). Percentages 0–100.
struct GpuUtilSample {
  Seconds t = 0;
  int device = 0;                             // GpuDevice::index
  double busy_percent = 0;                    // time a kernel or a copy ran on the device, every tenant
  double mem_bw_percent = 0;                  // time device memory was read or written
  std::optional<double> tree_busy_percent;    // the tree's share of it, where the driver says
  std::optional<double> pcie_rx_bytes_per_s;  // into the device
  std::optional<double> pcie_tx_bytes_per_s;  // out of the device
};

}  // namespace qprof::trace
