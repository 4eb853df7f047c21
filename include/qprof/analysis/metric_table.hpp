// SPDX-License-Identifier: Apache-2.0
// One row per metric: its names and texts, which trace lines its samples come from, when a trace
// has it, and how its peak is found (metric_table.cpp). Analysis, report and plot read the rows
// instead of switching on MetricKind: adding a metric is adding a row (and its recording, when it
// needs lines the trace does not hold yet).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "qprof/analysis/metric.hpp"
#include "qprof/common/units.hpp"
#include "qprof/trace/trace.hpp"

namespace qprof::analysis {

// What a row's functions need to know of the trace besides one line.
struct PickContext {
  bool cgroup = false;     // the trace has CGROUP lines (the footprint is then the charge)
  std::optional<int> dir;  // a dir:NAME metric: its directory's index in the trace, if it has it
};

// The value one trace line gives a metric's series, none when the line is not one of its samples.
template <class Sample>
using Pick = std::optional<Bytes> (*)(const Sample&, const PickContext&);

// Where a metric's samples come from: a pick per kind of trace line, null for kinds it does not
// read. A series takes its samples from one kind of line in a given trace (the footprint: CGROUP
// lines where there are any, else PSS lines), so the picks never interleave.
struct SamplePicks {
  Pick<trace::MemSample> mem = nullptr;         // MEM lines (always parsed)
  Pick<trace::MemSample> hwm = nullptr;         // HWM lines
  Pick<trace::PssSample> pss = nullptr;         // PSS lines
  Pick<trace::CgroupSample> cgroup = nullptr;   // CGROUP lines
  Pick<trace::MemKindsSample> kinds = nullptr;  // KINDS lines
  Pick<trace::DirSample> dir = nullptr;         // DIR lines
  bool gpu = false;  // GPU lines: one value per sample time, the latest of every device summed
};

// How a metric's peak is found from its series and the trace's PEAK lines (find_peak).
enum class PeakRule : std::uint8_t {
  highest_sample,  // the highest sample
  charge,          // the cgroup's charge: raised to the kernel's high-water mark, exact
  footprint,       // as charge where the trace has CGROUP lines, else the highest sample (Σ PSS)
  hwm_bound,       // Σ VmHWM: the PEAK line where higher, never below the bracket's upper bound
  kernel_end,      // the PEAK kernel_process line: exact, with no moment
};

// What a metric is at a stage's start and end markers (stage_stats).
enum class AtMarker : std::uint8_t {
  series,        // its latest sample at the marker's time
  stage_memory,  // the stage's own readings at its markers (Σ RSS, as an mprof FUNC line holds
                 // them), which count for the stage's peak too
  pss,           // the PSS pass the marker asked for (its line is timed after the marker), else
                 // the latest sample
  uss,           // likewise, that pass's USS
  footprint,     // as pss where the footprint is Σ PSS (no CGROUP lines), else the latest sample
};

struct MetricRow {
  MetricInfo info;               // name, title, what, windowed (dir: NAME is made per directory)
  std::string_view chart_title;  // plot's name of the series in legends: "tree RSS"
  bool (*has)(const trace::Trace&, const PickContext&);
  SamplePicks picks;
  PeakRule peak;
  AtMarker at_marker;
};

// Every row: the built-in metrics in the order tables list them, then dir (dir:NAME metrics).
std::span<const MetricRow> metric_rows();
// The row of a kind (every kind has one).
const MetricRow& metric_row(MetricKind kind);
// The row of a built-in metric by its name ("rss"); nullptr for any other name (dir:NAME too).
const MetricRow* metric_row_named(std::string_view name);
// The trace lines a row reads besides MEM ("PSS", "CGROUP", ...), for scans that skip the rest.
template <class Out>
void lines_read(const MetricRow& row, Out&& add) {
  if (row.picks.hwm) add("HWM");
  if (row.picks.pss) add("PSS");
  if (row.picks.cgroup) add("CGROUP");
  if (row.picks.kinds) add("KINDS");
  if (row.picks.dir) add("DIR");
  if (row.picks.gpu) add("GPU");
}
// Whether the metric's peak is the cgroup's charge in this trace (its kernel high-water marks
// count: PEAK cgroup, CGROUP peak column, CGPEAK windows).
bool is_charge(const MetricRow& row, const trace::Trace& t);

}  // namespace qprof::analysis
