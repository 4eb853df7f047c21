// SPDX-License-Identifier: Apache-2.0
// How --help (and so the man pages) shows qprof's options: the usage lines that name what a
// command takes, and each option's value by what it is (FILE, SIZE, PID), never CLI11's types.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>

namespace qprof::cli {

// The word after an option in --help and in its man page: "FILE", "SIZE|PCT", "DURATION", "PID";
// empty for a flag.
std::string value_name(const CLI::Option& opt);

// The formatter of every app: usage from the footer's "Usage:" lines (the footer keeps the rest),
// option names without CLI11's "{false}", values named by value_name, no "Needs:" or "x 2".
std::shared_ptr<CLI::Formatter> help_formatter();

}  // namespace qprof::cli
