// SPDX-License-Identifier: Apache-2.0
// The end of `qprof sweep`: the runs' table and, over one numeric parameter, the model of each
// figure (sweep_model_output.hpp).
#pragma once

#include <vector>

#include "qprof/report/report.hpp"
#include "qprof/runs/sweep_runs.hpp"
#include "sweep_model_output.hpp"

namespace qprof::cli {

// The runs' table: one row per run, a column per parameter, its status and figures.
report::Table runs_table(const std::vector<analysis::SweepParameter>& parameters,
                         const std::vector<runs::SweepRun>& runs);

// The runs' table and, over one numeric parameter, the model, as a document; and why the model
// could not be made or drawn, where it could not (the document is still printed).
struct SweepDocument {
  report::Document doc;
  Result<void> model;
};
SweepDocument sweep_document(const std::vector<analysis::SweepParameter>& parameters,
                             const std::vector<runs::SweepRun>& runs, const SweepModelRequest& model);

}  // namespace qprof::cli
