// SPDX-License-Identifier: Apache-2.0
// The memory request to paste into a scheduler, from a measured figure and a stated margin:
// Slurm's --mem=, Kubernetes' resources, Docker's --memory=, systemd's MemoryMax=. After an OOM
// kill the next request grows as Kubernetes' Vertical Pod Autoscaler grows it: to the larger of
// the limit killed at + 100 MiB and that limit × 1.2.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "qprof/common/types.hpp"

namespace qprof {

// VPA's default safety margin (--recommendation-margin-fraction 0.15): a request 15 % above the
// peak measured, the room left for the run-to-run spread of a job's peak.
inline constexpr double kDefaultMargin = 0.15;
// VPA's growth after an OOM kill (--oom-min-bump-up-bytes 100 MiB, --oom-bump-up-ratio 1.2).
inline constexpr Bytes kOomMinBump = Bytes{100} << 20;
inline constexpr double kOomBumpRatio = 1.2;

struct MemoryRequest {
  Bytes measured = 0;              // the figure it is made from (a footprint peak, fit's limit)
  std::string basis;               // what that figure is: "footprint peak", "fit's full-speed limit"
  double margin = kDefaultMargin;  // a fraction: 0.15 for 15 %
  std::optional<Bytes> oom_limit;  // the limit a process of the run was OOM-killed at
  Bytes bytes = 0;                 // the request, whole MiB, rounded up
  bool grown_after_oom = false;    // the OOM rule gave more than the margin did
};

// `measured` + margin, rounded up to a MiB; after an OOM kill at `oom_limit` (nullopt: none) at
// least max(oom_limit + 100 MiB, oom_limit × 1.2).
MemoryRequest memory_request(Bytes measured, std::string basis, double margin,
                             std::optional<Bytes> oom_limit = std::nullopt);

std::string slurm_request(const MemoryRequest& r);  // --mem=470M
std::string kubernetes_request(
    const MemoryRequest& r);                          // resources: {requests: {memory: 470Mi}, limits: {memory: 470Mi}}
std::string docker_request(const MemoryRequest& r);   // --memory=470m
std::string systemd_request(const MemoryRequest& r);  // MemoryMax=470M
// How it was made: "footprint peak 407.5 MiB + 15 % margin", or the OOM rule where it applied.
std::string request_rule(const MemoryRequest& r);
// The four forms, one a line ("  slurm       --mem=470M"), then the rule wrapped to `width`
// columns: what `qprof report --request` prints.
std::string request_block(const MemoryRequest& r, std::size_t width = 80);

// --margin: "15%" or "15" (a percentage, 0 to 1000). nullopt for anything else.
std::optional<double> parse_margin(std::string_view text);

}  // namespace qprof
