// SPDX-License-Identifier: Apache-2.0
// The Speaker cli gives the rooms below it: their words on qprof's stderr, each message on a line
// of its own after "qprof: ", formatted text (a run's summary) as it is.
#pragma once

#include "qprof/common/speaker.hpp"

namespace qprof::cli {

Speaker stderr_speaker();
// A warning of a room below (plot's FILE:LINE notes, gnuplot's own): "qprof: warning: …".
void warn_on_stderr(const std::string& warning);

}  // namespace qprof::cli
