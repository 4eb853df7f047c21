// SPDX-License-Identifier: Apache-2.0
// The in-memory model of one recorded run: what a .dat file holds, without the text.
// Plain data; reading and writing live in dat_format, numbers derived from it in analysis.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "qprof/common/types.hpp"
#include "qprof/trace/usage_samples.hpp"

namespace qprof::trace {

// What the clock of a trace's MEM lines says, found by BackwardClock. A line of 0: not seen.
struct ClockFindings {
  std::size_t back_line = 0;  // the first MEM line earlier than a sample before it or the header's start
  Seconds back_by = 0;        // by how much it went back there
  std::size_t late_line = 0;  // the first MEM line, far after the header's start
  Seconds late_by = 0;        // how far after it
};

struct MemSample {
  Seconds t = 0;
  Bytes bytes = 0;
};

// One process's own samples, as mprof -M records them (CHLD lines), keyed by PID.
struct ChildSeries {
  std::int64_t pid = 0;
  std::vector<MemSample> samples;
};

// Proportional and unique set size of the tree (from smaps_rollup, on a slower schedule).
struct PssSample {
  Seconds t = 0;
  Bytes pss = 0;
  Bytes uss = 0;
  // Pss_Anon + Pss_Shmem of smaps_rollup (Linux 5.9+): what cannot be dropped and read again,
  // shared pages counted once; absent where the kernel does not split PSS.
  std::optional<Bytes> unreclaimable;
};

// Cumulative I/O of the tree since the start, reaped members included: never decreases.
struct IoSample {
  Seconds t = 0;
  Bytes read_bytes = 0;   // storage reads
  Bytes write_bytes = 0;  // storage writes
  Bytes rchar = 0;        // bytes passed to read-like syscalls
  Bytes wchar = 0;        // bytes passed to write-like syscalls
};

// Cumulative CPU time (user + system) of the tree since the start, reaped members included.
struct CpuSample {
  Seconds t = 0;
  double cpu_seconds = 0;
};

// The memory charged to the tree's cgroup: page cache and kernel memory included, pages first
// touched outside it (shared libraries already cached) not. Another quantity than Σ RSS.
struct CgroupSample {
  Seconds t = 0;
  Bytes usage = 0;
  Bytes peak = 0;             // the kernel's high-water mark of the charge so far
  std::optional<Bytes> anon;  // memory.stat: anonymous memory (v2 anon, v1 rss)
  std::optional<Bytes> file;  // memory.stat: page cache (v2 file, v1 cache), shared memory included
  // memory.stat shmem: tmpfs, /dev/shm, memfd, SysV and MAP_SHARED anonymous memory. The kernel
  // counts it in `file`, yet it cannot drop it without swap. Absent in traces of older qprofs.
  std::optional<Bytes> shmem;

  // What the kernel cannot drop without swap: anon + shmem (anon alone where shmem is absent).
  std::optional<Bytes> unreclaimable() const {
    if (!anon) return std::nullopt;
    return *anon + shmem.value_or(0);
  }
  // The page cache it can drop: file less shmem.
  std::optional<Bytes> droppable_cache() const {
    if (!file) return std::nullopt;
    const Bytes shared = shmem.value_or(0);
    return shared < *file ? *file - shared : 0;
  }
};

struct GpuDevice {
  int index = 0;     // qprof's own index within the trace, referenced by GpuSample
  std::string uuid;  // stable key: GPU-…, MIG-…, or a PCI address for fdinfo backends
  std::string name;
  Bytes total = 0;  // capacity
};

struct GpuSample {
  Seconds t = 0;
  int device = 0;  // GpuDevice::index
  Bytes tree = 0;  // memory held by the tree's processes on this device
  Bytes used = 0;  // the device's total use, every tenant included
  // How old `tree` was at `t`: the per-process query behind it was asked this long before (0: a
  // device total, read at t). Absent in traces of older qprofs.
  std::optional<Seconds> tree_age;
};

// What PyTorch's CUDA caching allocator holds on one device, as the program's marker helper sent
// it with a checkpoint (torch.cuda.memory_allocated / memory_reserved); TORCH lines.
struct TorchSample {
  Seconds t = 0;
  int device = 0;       // torch's CUDA device index (not necessarily GpuDevice::index)
  Bytes allocated = 0;  // held by live tensors
  Bytes reserved = 0;   // held by the caching allocator (allocated + its cache)
};

// A directory watched with --watch-dir (DIRDEF line), referenced by DirSample::dir.
struct WatchedDir {
  int index = 0;
  std::string path;  // as given on the command line
};

// One walk of a watched directory (DIR line). A directory that does not exist (yet) counts as
// empty, as Quark's cache-dir monitor counts it.
struct DirSample {
  Seconds t = 0;
  int dir = 0;          // WatchedDir::index
  Bytes apparent = 0;   // Σ st_size of its regular files, hard links once
  Bytes allocated = 0;  // Σ st_blocks × 512 of everything in it, itself included, hard links once
  Bytes fs_free = 0;    // its file system's space free to unprivileged users (statvfs f_bavail × f_frsize)
};

// Values of every series as they were when a marker was recorded: the latest sample of each
// series at that point of the trace. Absent series stay empty.
struct Snapshot {
  std::optional<Bytes> rss;
  std::optional<Bytes> pss;
  std::optional<Bytes> uss;
  std::optional<Seconds> pss_age;  // how far from that moment the PSS/USS pass was (its own schedule)
  std::optional<Bytes> gpu_tree;   // summed over devices
  std::optional<Seconds> gpu_age;  // how far from that moment the GPU figure was (0: sampled for it)
  std::optional<Bytes> read_bytes;
  std::optional<Bytes> write_bytes;
  std::optional<double> cpu_seconds;
};

struct Marker {
  Seconds t = 0;
  std::string label;
  Snapshot at;
};

struct Stage {
  enum class Source { markers, func };
  std::string name;
  Seconds t_start = 0;
  Seconds t_end = 0;
  Bytes mem_start = 0;
  Bytes mem_end = 0;
  bool closed = true;  // false: "X Start" without "X End"; t_end is then the end of the trace
  Source source = Source::markers;
};

// A process of the tree that the kernel's OOM killer killed (an OOM line): which, when, under
// which limit, and what it and the tree held just before. Fields qprof could not learn stay empty.
struct OomKill {
  Seconds t = 0;               // when: the kernel log's time of the kill, else when qprof saw it
  std::int64_t pid = 0;        // 0: a kill was counted in the tree's cgroup but no process was named
  std::string name;            // its comm
  std::string role;            // "command" (the process qprof started) or "worker" (any other member)
  std::string source;          // how qprof learnt it: "kernel-log", "cgroup" (an oom_kill count), "exit" (SIGKILL)
  std::string scope;           // the memory cgroup whose limit was hit, "machine" for the whole machine's memory
  std::optional<Bytes> limit;  // that limit, where one was read
  std::optional<Bytes> held;   // what the process held: the kernel's RSS at the kill, else its last sample
  std::optional<Bytes> tree;   // the tree's footprint (else Σ RSS) in the last sample before
  std::string stage;           // the innermost stage open then ("" none)
};

struct ExitInfo {
  Seconds t = 0;
  int status = 0;  // what qprof exited with: the code, or 128 + signal
  int signal = 0;  // the signal that killed the command, 0 if it exited
  bool timed_out = false;
  bool status_known = true;  // false: qprof attached to the process and could not learn its status
};

// Where a run sits in a distributed job (torchrun, mpirun, srun): from the launcher's environment.
struct JobMeta {
  std::optional<std::int64_t> rank;        // global rank
  std::optional<std::int64_t> local_rank;  // rank on its host
  std::optional<std::int64_t> world_size;
  std::string job_id;    // the launcher's job id: traces of one job share it
  std::string launcher;  // torchrun, openmpi, pmix, pmi, slurm

  bool any() const { return rank || local_rank || world_size || !job_id.empty() || !launcher.empty(); }
};

// What the header says about the run. An mprof file has none of it (format_version 0).
struct TraceMeta {
  int format_version = 0;
  std::string qprof_version;
  std::string host;
  std::string metric;  // rss, pss, uss or all
  Seconds interval = 0;
  std::int64_t root_pid = 0;
  std::optional<Seconds> start;
  JobMeta job;
  std::map<std::string, std::string> other;  // keys this reader does not know, kept verbatim
};

struct Trace {
  std::string source;  // file name it was read from
  TraceMeta meta;
  std::string cmdline;
  std::vector<MemSample> mem;  // the tree's RSS (mprof MEM lines)
  std::vector<ChildSeries> children;
  std::vector<Marker> markers;
  std::vector<Stage> stages;
  std::vector<PssSample> pss;
  std::vector<IoSample> io;
  std::vector<CpuSample> cpu;
  std::vector<MemSample> hwm;  // Σ VmHWM of the tree so far: an upper bound of the peak
  std::vector<CgroupSample> cgroup;
  // CGPEAK lines: the kernel's exact peak of the charge between two checkpoints, each at the
  // checkpoint that closed its window (the first window opens at the start of the run).
  std::vector<MemSample> cgroup_windows;
  std::vector<GpuDevice> gpu_devices;
  std::vector<GpuSample> gpu;
  std::vector<TorchSample> torch;
  std::vector<MemKindsSample> kinds;    // KINDS lines
  std::vector<TasksSample> tasks;       // TASKS lines
  std::vector<GpuUtilSample> gpu_util;  // GPUUTIL lines
  std::vector<WatchedDir> dirs;         // DIRDEF lines
  std::vector<DirSample> dir_samples;   // DIR lines
  std::map<std::string, Bytes> peaks;   // PEAK lines by name (see dat_format.hpp)
  std::optional<ExitInfo> exit;
  std::vector<OomKill> oom_kills;  // OOM lines, in time order
  std::vector<std::string> notes;  // NOTE lines: what qprof warned about while recording
  // UNREAD: members qprof could not read (out of descriptors); every figure of the trace misses
  // them, and Σ VmHWM is no bound.
  std::uint64_t unread_processes = 0;
  // The line (from 1) of a last line without its newline, ignored by the reader; 0: none.
  std::size_t last_line_cut = 0;
  // The line of a second CMDLINE: runs appended to one file (`mprof run -o` appends), read as
  // one trace under the last command; 0: one run.
  std::size_t second_run_line = 0;
  ClockFindings clock;  // where the samples' clock went back, or started far after the header's start
  // Set by read_trace_reduced: of each sampled series only the records its peaks come from are
  // kept; a figure that needs every record reads the file again, as far as this reading went.
  struct Reduced {
    std::uint64_t mem_samples = 0;             // MEM lines in the file
    std::uint64_t bytes = 0;                   // how much of the file was read
    std::map<int, std::uint64_t> dir_samples;  // DIR lines of each watched directory, by index
    std::string file;                          // the file read again (`source` may be renamed)
  };
  std::optional<Reduced> reduced;

  bool is_qprof() const { return meta.format_version > 0; }
  // The number of memory samples (MEM lines) of the run.
  std::uint64_t samples() const { return reduced ? reduced->mem_samples : mem.size(); }
  // The time the run started: the header's start, else the first memory sample.
  Seconds t0() const;
};

}  // namespace qprof::trace
