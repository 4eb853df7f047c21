// SPDX-License-Identifier: Apache-2.0
// `qprof run` and `qprof attach` share their options, their checks and what follows the run
// (stage table, YAML, budget): run.cpp builds either; attach.cpp holds what only attach needs.
#pragma once

#include <sys/types.h>

#include "commands.hpp"
#include "qprof/record/options.hpp"

namespace qprof::cli {

// `run` (attach false) or `attach` (true).
Command add_recording(CLI::App& app, const Invocation& invocation, bool attach);

// What --help of attach says after the options.
extern const char* const kAttachFooter;

// Checks the options that make no sense attached (a command, --cgroup) and records the PID.
Result<void> attach_to(record::RunOptions& o, pid_t pid);

}  // namespace qprof::cli
