// SPDX-License-Identifier: Apache-2.0
// The table behind the CSV and JSON exports: one row per memory sample (MEM line) of a trace, one
// column per series any of the exported traces has. A first streaming pass finds the columns, a
// second streams the rows, holding back the last few thousand (a PSS reading is written after the
// samples taken while it was read, and belongs to them).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "qprof/common/units.hpp"
#include "trace_name.hpp"
#include "trace_source.hpp"

namespace qprof::exports {

struct Column {
  std::string name;  // "rss_mib", "gpu0_mib", "cpu_percent", "child_1234_mib"
  std::string unit;  // "MiB", "%", "MiB/s", "s"
};

// Which series the traces have, gathered over every trace.
class ColumnSet {
 public:
  // Streams the trace once and adds the series it has; returns what its name needs (trace_names).
  // Throws trace::ParseError for a bad line.
  Result<TraceIdentity> scan(const TraceSource& trace);
  std::vector<Column> columns(Unit unit) const;

  bool pss = false, cgroup = false, cpu = false, io = false;
  bool kinds = false, tasks = false;          // KINDS, TASKS lines
  std::map<int, std::size_t> gpu_util;        // GPUUTIL device index → position among those columns
  std::map<int, std::size_t> gpu;             // device index → position among the GPU columns
  std::map<std::int64_t, std::size_t> child;  // PID → position among the child columns
  // A column per process or device made every row as wide as the trace had processes: 200 000
  // of them wrote gigabytes. The first kMaxColumnsPerKind of each have a column; the rest counted.
  static constexpr std::size_t kMaxColumnsPerKind = 64;
  std::size_t children_left_out = 0, gpus_left_out = 0;
};

// One row: the sample's time from the trace's start, then a value (or none) per column after
// time, in ColumnSet::columns order, in the export's unit.
struct Row {
  double time_s = 0;
  std::vector<std::optional<double>> values;
};

// Streams the rows of one trace. Each row holds the memory sample, the children sampled with it,
// and the latest value of each slower series (PSS, cgroup, GPU, CPU % and I/O rates over the last
// interval of their own schedule) at that time, its own sample's included; a series not sampled
// yet is empty.
Result<void> stream_rows(const TraceSource& trace, const ColumnSet& columns, Unit unit,
                         const std::function<void(const Row&)>& emit);

}  // namespace qprof::exports
