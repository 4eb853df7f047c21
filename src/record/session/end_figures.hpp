// SPDX-License-Identifier: Apache-2.0
// The report's figures of the whole run, read once the tree is gone: the cgroup's peak and OOM
// kills, the tree's totals and Σ VmHWM's bracket (PEAK lines in the trace), qprof's own CPU
// time, a peak missed between samples, and the command's exit (the EXIT line).
#pragma once

#include <optional>
#include <string>

#include "exit_tracker.hpp"
#include "notices.hpp"
#include "qprof/record/cgroup.hpp"
#include "qprof/record/sampler.hpp"
#include "qprof/record/session.hpp"

namespace qprof::record::session {

struct TreeSources {
  Sampler& sampler;
  const TreeCgroup* cgroup;                          // --cgroup, with or without a memory controller
  const std::optional<MemoryCgroupDir>& own_cgroup;  // without --cgroup: qprof's, the job's too
  Seconds asked_interval;
  std::optional<double> cpu_peak_percent = std::nullopt;  // the session's CpuRate, finished
  Seconds stats_interval = 0;
};

// The PSS side of the run: its peaks and how often it was read.
PssReport pss_report(const Sampler& sampler);

// After report.kernel_process_peak and report.sampling.unread_members are known.
void record_tree_figures(const TreeSources& in, trace::Writer& out, Notices& notices, RunReport& report);

// The EXIT line at `t_end` and how the command ended; said when it is not a plain exit.
// `command_name` names it in that message; the report's OOM figures tell a SIGKILL's sender.
ExitReport record_exit(const ExitTracker& exit, const std::string& command_name, Seconds t_end, trace::Writer& out,
                       const RunReport& report, const Speaker& speaker);

}  // namespace qprof::record::session
