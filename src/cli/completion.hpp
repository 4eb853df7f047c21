// SPDX-License-Identifier: Apache-2.0
// The bash and zsh completion scripts, written at build time from the CLI11 apps' own option lists
// (`qprof --help-completion`), so that completion offers exactly what --help lists.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace qprof::cli {

std::string bash_completion(const CLI::App& app);
// The zsh completion function (`_qprof`), from the same lists, with each option's description.
std::string zsh_completion(const CLI::App& app);

}  // namespace qprof::cli
