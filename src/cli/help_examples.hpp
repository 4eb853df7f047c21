// SPDX-License-Identifier: Apache-2.0
// Examples appended to each subcommand's --help, and the answer to a mistyped subcommand.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "qprof/common/failure.hpp"

namespace qprof::cli {

// Appends an "Examples:" block to the footer of every subcommand that has one in the table.
void add_help_examples(CLI::App& app);

// When `word` (qprof's first argument) is neither an option nor a subcommand: the failure that
// names the subcommands and the nearest one (Damerau-Levenshtein distance); else nothing.
std::optional<Failure> unknown_subcommand(const CLI::App& app, const std::string& word);

// When `typed` ("--metrc", "--metrc=pss") is no option of `sub` but one is near it: that option's
// name ("--metric"); else empty.
std::string option_suggestion(const CLI::App& sub, const std::string& typed);

}  // namespace qprof::cli
