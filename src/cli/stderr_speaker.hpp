// SPDX-License-Identifier: Apache-2.0
// The one place where qprof's words reach its stderr. The rooms below cli say through the Speaker
// it gives them, and each subcommand says its own warnings and notes through one too: each message
// on a line of its own after "qprof WHO: ", wrapped to the terminal's width; formatted text (a
// run's summary, fit's table) as it is.
#pragma once

#include <string>

#include "qprof/common/speaker.hpp"

namespace qprof::cli {

// `who`: the subcommand ("peak" gives "qprof peak: "); empty gives "qprof: ".
Speaker stderr_speaker(const std::string& who = "");
// A warning of a room below (plot's FILE:LINE notes, gnuplot's own): "qprof: warning: …".
void warn_on_stderr(const std::string& warning);

}  // namespace qprof::cli
