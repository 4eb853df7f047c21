// SPDX-License-Identifier: Apache-2.0
// The bottleneck question, per stage: how busy the CPU and the GPUs were, how fast the tree read
// from storage and how much its memory grew, and a verdict when the GPU sat mostly idle while
// the tree read or computed on the CPU. A verdict always comes with the numbers it rests on;
// without GPU samples there is no GPU verdict (the CPU and I/O numbers are still given).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "qprof/trace/trace.hpp"

namespace qprof::analysis {

// The thresholds of the verdict (README "qprof report").
inline constexpr double kGpuIdleBelowPercent = 30.0;  // mean busy % below this: "mostly idle"
// A stage used the GPU when it was this busy at least once: one that builds data on the CPU, or
// whose workers sleep holding GPU memory, never waits on input for a GPU, and gets no verdict.
inline constexpr double kGpuUsedPercent = 5.0;
inline constexpr double kInputReadBytesPerSecond = 50e6;  // storage reads of at least 50 MB/s
inline constexpr double kCpuBusyPercent = 80.0;           // mean CPU of at least 80 % of one core
inline constexpr Seconds kMinVerdictSeconds = 1.0;        // shorter stages get numbers, no verdict
// Rates of cumulative counters are taken over intervals of at least this long: CPU time moves in
// 10 ms ticks, and the extra sample at a marker would otherwise make a 2 ms interval read 500 %.
inline constexpr Seconds kMinRateInterval = 0.05;

struct StageBottleneck {
  std::string stage;
  Seconds t_start = 0, t_end = 0;  // Unix seconds
  bool closed = true;
  // Of one core. CPU and read rates come from readings inside the stage (the stats schedule,
  // every 0.1 s by default): none where it holds fewer than two, kMinRateInterval apart.
  std::optional<double> cpu_mean_percent, cpu_peak_percent;
  std::optional<double> gpu_mean_percent, gpu_peak_percent;  // busy % (NVML utilization.gpu), over devices and samples
  std::optional<double> read_mean_bytes_per_s, read_peak_bytes_per_s;  // storage reads
  std::optional<std::int64_t> memory_growth;                           // RSS at the stage's end minus at its start
  bool input_bound = false;
  std::string verdict;  // "GPU busy 12 % while reading 410 MB/s: likely input-bound"; empty: none
};

// One entry per stage of the trace, in the trace's stage order.
std::vector<StageBottleneck> stage_bottlenecks(const trace::Trace& trace);

}  // namespace qprof::analysis
