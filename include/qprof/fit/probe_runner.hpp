// SPDX-License-Identifier: Apache-2.0
// One run of the command in a probe group: started through record's launcher (it joins the
// group before exec), waited for with its resource usage, stopped at a deadline or when the user
// asks, and its group emptied of processes before it returns.
#pragma once

#include <sys/resource.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "qprof/common/types.hpp"
#include "qprof/fit/input_files.hpp"
#include "qprof/fit/probe_group.hpp"
#include "qprof/fit/stop_signals.hpp"
#include "qprof/record/launcher.hpp"

namespace qprof::fit {

struct ProbeWatch {
  std::optional<double> deadline_s;  // from the start; the tree is killed there
  double sample_every_s = 0;         // > 0: memory.stat and the charge are sampled this often
  int stderr_fd = -1;                // >= 0: the command's stderr (fit --gpu reads it for CUDA's OOM message)
  InputFiles* files = nullptr;       // when sampling: the files the job opens or maps are added
};

struct ProbeRun {
  std::optional<Failure> launch_failure;  // the command could not start (126, 127)
  int wait_status = 0;
  rusage usage{};      // the command and the descendants it waited for
  double seconds = 0;  // from the launch to the command's end
  bool stopped_at_deadline = false;
  int stopped_by_signal = 0;  // SIGINT/SIGTERM came during the run: its outcome means nothing
  std::optional<std::uint64_t> oom_kills;
  std::optional<Bytes> charge_peak;           // the kernel's, else the highest sample
  std::optional<Bytes> unreclaimable_peak;    // sampled; nullopt without sampling
  std::optional<std::uint64_t> major_faults;  // the group's pgmajfault, else the rusage's
};

ProbeRun run_probe(const std::vector<std::string>& argv, ProbeGroup& group, const StopSignals& signals,
                   const ProbeWatch& watch);

}  // namespace qprof::fit
