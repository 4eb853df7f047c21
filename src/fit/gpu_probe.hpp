// SPDX-License-Identifier: Apache-2.0
// One run of fit --gpu: `qprof run` of the command (its GPU sampler follows the tree, its marker
// channel takes the torch helper's figures) in a probe group, as a client of fit's MPS daemon,
// under a device-memory limit or none; then its trace and its stderr read for what it held and
// how it ended. Not a public header: gpu_fit.cpp's helper.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "qprof/fit/fit.hpp"
#include "qprof/fit/probe_group.hpp"
#include "qprof/fit/probe_runner.hpp"
#include "qprof/fit/stop_signals.hpp"

namespace qprof::fit {

struct GpuProbeRequest {
  std::vector<std::string> command;
  std::string device_uuid;
  std::string backend;         // qprof run --gpu's choice
  std::optional<Bytes> limit;  // none: the baseline
  std::string work_dir;        // the trace and the stderr go there
  int number = 0;              // names the files
  std::optional<double> deadline_s;
};

struct GpuProbeResult {
  ProbeRun run;
  Probe probe;                 // classified, with the GPU and torch figures
  std::optional<Bytes> floor;  // the smallest non-zero reading of the tree on the device
  std::string trace_problem;   // why the trace could not be read (the figures are then missing)
};

GpuProbeResult run_gpu_probe(const GpuProbeRequest& request, ProbeGroup& group, const StopSignals& signals);

}  // namespace qprof::fit
