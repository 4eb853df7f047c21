// SPDX-License-Identifier: Apache-2.0
// An OOM kill (trace.hpp's OomKill) in words, the same in the run's summary, report, peak and
// compare: which process, when, in which stage, under which limit, holding what.
#pragma once

#include <optional>
#include <string>

#include "qprof/trace/trace.hpp"

namespace qprof::trace {

// "process 42 (python3, a worker) at 2.31 s, in stage Load: the memory cgroup limit of 300.0 MiB
// (/slurm/uid_0/job_5/step_0) was hit; it held 250.1 MiB, the tree 298.7 MiB". `run_start`: the
// time is said from it (nullopt: not said, the kill is now).
std::string describe_oom_kill(const OomKill& kill, std::optional<Seconds> run_start);
// "OOM kill" or "2 OOM kills": what the summary's first line is called.
std::string oom_kills_title(std::size_t kills);

}  // namespace qprof::trace
