// SPDX-License-Identifier: Apache-2.0
// What users type out of habit from other tools: git's `help SUB` and `version`, and a size
// split by a space ("--max-peak 4 GB"), which the shell hands over as two words.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "qprof/common/failure.hpp"

namespace qprof::cli {

// `qprof help [SUB]` becomes `qprof [SUB] --help`, `qprof version` becomes `qprof --version`.
// `args` are qprof's arguments in the order typed, without the program's name.
void rewrite_habits(std::vector<std::string>& args);

// A size option of `sub` followed by a number and then a unit word ("--max-peak 4 GB"): a usage
// error that names it, since the unit would else become the command to run (or a file to read).
std::optional<Failure> split_size(const CLI::App& sub, const std::vector<std::string>& args);

}  // namespace qprof::cli
