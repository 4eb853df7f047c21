// SPDX-License-Identifier: Apache-2.0
// The traces of a directory, as `qprof list` and `qprof clean` see them (and as mprof list/clean
// do): files with a default trace name, oldest first, each summarised by one streaming pass.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qprof/common/types.hpp"
#include "qprof/trace/completeness.hpp"

namespace qprof::analysis {

// "qprof_YYYYMMDDhhmmss….dat" or, for a rank, "qprof_HOST.rRANK_YYYYMMDDhhmmss….dat" (qprof
// run's default names) or "mprofile_YYYYMMDDhhmmss.dat" (mprof's): the only files list and clean
// ever touch.
bool is_default_trace_name(std::string_view file_name);

// When the run of a default-named trace started, as its name holds it (local time, as both
// qprof and mprof write it): Unix s. nullopt for another name or a time that is no date.
std::optional<Seconds> name_start_time(std::string_view file_name);

// Paths of the default-named traces in `dir`, oldest first (by the time in their names).
// Throws std::filesystem::filesystem_error when `dir` cannot be read.
std::vector<std::string> default_traces(const std::string& dir);

struct TraceListing {
  std::string path;
  std::optional<Seconds> start;  // Unix s: the header's start, else the first sample
  std::string command;
  Seconds duration = 0;       // the first sample (or the header's start) to the last, or the exit
  std::optional<Bytes> peak;  // sampled Σ RSS; none without samples
  // The footprint (trace/footprint.hpp: the tree's cgroup charge, else Σ PSS); none where the
  // trace has neither (mprof's, --no-pss).
  std::optional<Bytes> footprint;
  // Whether it is whole and of one run: what every reader says of it (trace::reading_notices).
  trace::Completeness completeness;
};

// Streams the trace once, holding nothing of it. Throws trace::ParseError.
TraceListing summarize_trace(const std::string& path);

}  // namespace qprof::analysis
