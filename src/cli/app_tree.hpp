// SPDX-License-Identifier: Apache-2.0
// Walking the CLI11 apps: what the completion scripts, the man pages, the examples and the typo
// hint all need to list.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace qprof::cli {

// Every subcommand registered. (CLI11's get_subcommands() without a filter gives only those that
// were parsed.)
inline std::vector<const CLI::App*> all_subcommands(const CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}
inline std::vector<CLI::App*> all_subcommands(CLI::App& app) {
  return app.get_subcommands([](const CLI::App*) { return true; });
}

// An option's names as they are typed: "-o", "--output".
inline std::vector<std::string> option_names(const CLI::Option& o) {
  std::vector<std::string> names;
  for (const std::string& n : o.get_snames()) names.push_back("-" + n);
  for (const std::string& n : o.get_lnames()) names.push_back("--" + n);
  return names;
}

}  // namespace qprof::cli
