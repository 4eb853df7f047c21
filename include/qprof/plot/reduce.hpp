// SPDX-License-Identifier: Apache-2.0
// A trace reduced to what a chart draws, in one streaming pass over the file (a trace::Visitor):
// every series goes through a min/max envelope of about the chart's pixel width, so a trace of
// hours at 1 ms costs the same memory as one of seconds. Markers, stages and peaks are kept whole.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qprof/common/failure.hpp"
#include "qprof/plot/envelope.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof::plot {

// A series clipped to the window and downsampled. Times are seconds from the trace's start.
class Series {
 public:
  Series(std::shared_ptr<EnvelopeGrid> grid, double from, double to);
  void add(double t, double v);

  bool empty() const { return env_.empty(); }
  const Envelope& envelope() const { return env_; }
  // The envelope's points, with the last sample before the window and the first after it, so a
  // line reaches the window's edges.
  std::vector<Point> points() const;
  // For cumulative counters: the last sample of each bucket (and the neighbours outside).
  std::vector<Point> last_points() const;

 private:
  // `inner` between the sample before the window and the one after it.
  std::vector<Point> with_neighbours(const std::vector<Point>& inner) const;

  Envelope env_;
  double from_, to_;
  std::optional<Point> before_, after_;
};

struct ChildData {
  std::int64_t pid = 0;
  Series mem;
  std::string name;  // PROC line (the process's comm); empty when the trace has none
};

struct GpuDeviceData {
  trace::GpuDevice info;  // index, uuid, name, total (from GPUDEV; name empty when there was none)
  Series tree;
  Series used;
};

// How busy one GPU was (GPUUTIL), percentages.
struct GpuUtilData {
  int device = 0;  // GpuDevice::index
  Series busy, mem_bw, tree_busy;
};

// A directory watched with --watch-dir (DIRDEF, DIR lines).
struct DirData {
  trace::WatchedDir info;
  Series apparent;  // Σ st_size of its files
  Series fs_free;   // its file system's free space
};

struct PlotMarker {
  Seconds t = 0;  // from the start
  std::string label;
  bool stage_edge = false;  // the Start or End of a stage (drawn as the stage, not on its own)
};

struct TraceData {
  std::string path;
  std::string cmdline;
  trace::TraceMeta meta;
  bool qprof = false;  // a qprof trace (QPROF header); otherwise mprof's
  // Every time below is in seconds from t0, the start: the header's, else the first sample's
  // (Unix seconds).
  Seconds t0 = 0;
  std::uint64_t samples = 0;  // MEM lines in the whole file
  Seconds t_end = 0;          // the last MEM line of the file
  Seconds t_begin = 0;        // the earliest MEM line: below 0 where the clock went back past the start

  // All series share one grid, so they are cut at the same times.
  std::shared_ptr<EnvelopeGrid> grid;
  double window_from, window_to;  // seconds from the start; ±infinity when open

  Series mem;
  Series pss, uss;
  Series cgroup;  // usage
  // The unreclaimable part of the footprint: the cgroup's anon + shmem where the tree had a group
  // of its own, else Pss_Anon + Pss_Shmem of the PSS passes (trace/footprint.hpp's rule).
  Series cgroup_unreclaimable, pss_unreclaimable;
  std::vector<ChildData> children;  // in order of appearance; with root_line, the root first
  // The processes past kMaxSeriesPerKind, as one envelope of all their samples: a series per
  // process cost up to ≈ 170 KB each, and 14 000 of them aborted a plot under 2 GiB.
  Series other_children;
  std::size_t other_children_count = 0;   // processes in other_children
  bool root_line = false;                 // children[0] is the root's own RSS (MEM minus CHLD)
  std::vector<GpuDeviceData> gpus;        // in order of appearance, at most kMaxSeriesPerKind
  std::size_t gpus_left_out = 0;          // devices past that: in gpu_total only
  Series gpu_total;                       // the tree's GPU memory summed over devices
  std::vector<trace::TorchSample> torch;  // TORCH lines (one per device and checkpoint), times from the start
  Series cpu;                             // cumulative CPU seconds
  Series io_read, io_write;               // cumulative storage bytes
  // KINDS: each kind, and the kinds stacked (anon, anon + file, anon + file + shmem) so that a
  // stacked chart draws each cumulative curve from its own envelope.
  Series anon, file, shmem, swap;
  Series stack_file, stack_shmem;
  Series processes, threads, vsz;     // TASKS
  std::vector<GpuUtilData> gpu_util;  // GPUUTIL, by device in order of appearance
  std::vector<DirData> dirs;          // by index, in order of appearance, at most kMaxSeriesPerKind
  std::size_t dirs_left_out = 0;
  std::vector<PlotMarker> markers;     // every MARK line, in file order
  std::vector<trace::Stage> stages;    // by start time (mem_start/mem_end as recorded)
  std::map<std::string, Bytes> peaks;  // PEAK lines; cgroup and hwm_sum also derived from samples
  std::optional<trace::ExitInfo> exit;
  std::size_t markers_dropped = 0;  // beyond kMaxMarkers

  TraceData(std::size_t columns, double from, double to);
  TraceData(std::shared_ptr<EnvelopeGrid> grid, double from, double to);
};

// The series a --metric names (rss, pss, uss, gpu, cgroup, anon, file, shmem, swap, dir:NAME with
// NAME a watched directory's path or last component); null when the trace has none of it.
const Series* metric_series_of(const TraceData& t, std::string_view metric);

struct ReduceOptions {
  std::size_t columns = 1280;  // downsampling target (about the chart's width in pixels)
  // Window in seconds from the start; samples outside it are not drawn.
  std::optional<double> from, to;
  bool children = true;  // keep CHLD series
  // Unix time of second 0, so that a job's ranks share one axis (their sum's); nullopt: the
  // trace's own start.
  std::optional<Seconds> t0;
  bool warn_incomplete = true;  // say where the trace has no end record or its last line is cut
};

// At most this many processes, devices or directories of a trace get series of their own (a
// chart draws fewer); the processes with the highest peaks so far are kept, the rest summarised.
inline constexpr std::size_t kMaxSeriesPerKind = 64;
// At most this many markers are kept per trace (a chart could not show more).
inline constexpr std::size_t kMaxMarkers = 10000;
// The longest span of a trace qprof draws, in seconds (about 31.7 years): a time further from
// the trace's start is "FILE:LINE: … too far to draw" (exit 2).
inline constexpr double kMaxSpan = 1e9;

using WarningSink = std::function<void(const std::string&)>;

// The trace reduced, or the reader's Failure ("FILE:LINE: reason"); a truncated last line goes
// to `warn`. A trace without a single MEM line fails too ("FILE: … the trace is empty").
Result<TraceData> reduce_file(const std::string& path, const ReduceOptions& options, const WarningSink& warn = {});
Result<TraceData> reduce_text(std::string_view text, const std::string& name, const ReduceOptions& options,
                              const WarningSink& warn = {});

}  // namespace qprof::plot
