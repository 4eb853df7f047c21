// SPDX-License-Identifier: Apache-2.0
// qprof fit's result as text (stderr: the runs' table and the three findings), JSON and CSV.
// The command is untrusted text: it never breaks a format nor drives a terminal.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "qprof/fit/fit.hpp"

namespace qprof::fit {

// Every line at most `width` columns (the terminal's; 80 where stderr is not one).
std::string text_report(const FitReport& report, std::size_t width = 80);
// The findings as sentences, each starting "qprof fit: ", unwrapped: read from the runs' table
// only, so that they never claim what no run showed. A limit is said to be completed in only where
// a run completed there; a run stopped at the cutoff was "still running at N x when stopped". The
// runs that disagree with a finding follow it (noisy above it, not monotone below). Without a
// limited run there is no finding: that is said instead.
std::vector<std::string> finding_lines(const FitReport& report);
// The limit below a finding where runs fell short, or nullopt where none was run there: the
// search's floor (the unreclaimable peak) is assumed to fall short, never measured.
std::optional<Bytes> measured_short_of(const FitReport& report, const Finding& finding);
std::string json_report(const FitReport& report);
// One row per run, then one per finding: kind,name,limit_bytes,outcome,seconds,slowdown,
// major_faults,read_bytes,exit_status,detail (kind: command, baseline, probe, finding).
std::string csv_report(const FitReport& report);

// The findings with their names, in the order they are reported.
struct NamedFinding {
  const char* key;    // smallest_running, smallest_within_slowdown, full_speed
  const char* title;  // for people
  const std::optional<Finding>* finding;
};
std::vector<NamedFinding> named_findings(const FitReport& report);

}  // namespace qprof::fit
