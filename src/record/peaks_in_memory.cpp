// SPDX-License-Identifier: Apache-2.0
// The run as qprof holds it in memory at its end, for when its trace cannot be read back.
#include "qprof/record/session.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::record {
using trace::ExitInfo;
using trace::Trace;

Trace peaks_in_memory(const RunReport& r) {
  Trace t;
  t.source = r.trace_path;
  t.meta.format_version = trace::kFormatVersion;
  t.meta.start = r.start;
  t.cmdline = r.command;
  if (r.sampled_peak) t.mem.push_back(*r.sampled_peak);
  if (r.pss.peak) {
    t.pss.push_back(*r.pss.peak);
    // The USS peak's own time is not kept: it is given the PSS peak's.
    if (r.pss.uss_peak) t.pss.push_back({r.pss.peak->t, 0, *r.pss.uss_peak, std::nullopt});
  }
  if (r.gpu.peak) t.gpu.push_back({r.gpu.peak->t, 0, r.gpu.peak->bytes, 0, std::nullopt});
  if (r.cgroup.peak) t.peaks[std::string(trace::kPeakCgroup)] = *r.cgroup.peak;
  if (r.kernel_process_peak) t.peaks[std::string(trace::kPeakKernelProcess)] = *r.kernel_process_peak;
  // As the trace writes it: a bound only when every process's peak is covered.
  if (r.hwm.sum > 0)
    t.peaks[std::string(r.hwm.uncovered == 0 ? trace::kPeakHwmSum : trace::kPeakHwmSumPartial)] = r.hwm.sum;
  if (r.limit.bytes) {
    t.meta.other["limit"] = std::to_string(*r.limit.bytes);
    t.meta.other["limit_source"] = r.limit.source;
  }
  t.stages = r.stages;
  t.exit = ExitInfo{r.start + r.duration, r.exit.status, r.exit.signal, r.exit.timed_out};
  t.notes = r.warnings;
  return t;
}

}  // namespace qprof::record
