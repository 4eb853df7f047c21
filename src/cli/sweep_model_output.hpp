// SPDX-License-Identifier: Apache-2.0
// The end of `qprof sweep` and `qprof compare --sweep NAME`: traces that carry NAME=VALUE in their
// label or file name, read as a model of each figure against NAME, printed as tables.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "qprof/common/failure.hpp"
#include "qprof/report/report.hpp"
#include "qprof/trace/trace.hpp"
#include "qprof/common/speaker.hpp"

namespace qprof::cli {

struct LabelledTrace {
  std::string label;  // where NAME=VALUE is looked for first; then the trace's file name
  const trace::Trace* trace = nullptr;
};

struct SweepModelRequest {
  std::string parameter;
  std::optional<double> at;
  std::string limit;  // a size, or empty: the limit in force the first trace recorded
  std::string plot;   // the chart of the solved figure (footprint, else Σ RSS peak) into this file
  bool rss = false;   // --metric rss: solve and draw Σ RSS's peak, mprof's figure
};

// Adds the points and the model to `doc` (its CSV table: the model). Traces of a failed run
// (non-zero exit) and traces without the parameter are left out, each said through `say`; fails when no value remains,
// a value is not a number, --limit cannot be read or the chart fails (what `doc` holds by then is still worth
// printing).
// A parameter's value as the model reads it: the whole text a finite number, else nullopt.
std::optional<double> as_number(const std::string& text);

Result<void> add_sweep_model(report::Document& doc, const std::vector<LabelledTrace>& traces,
                             const SweepModelRequest& request, const Speaker& say);

}  // namespace qprof::cli
