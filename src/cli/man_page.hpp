// SPDX-License-Identifier: Apache-2.0
// Manual pages written from the CLI11 apps themselves (`qprof --help-man [SUBCOMMAND]`, run at
// build time), so that a page and --help can never list different options.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace qprof::cli {

// qprof(1) when `sub` is null, else qprof-SUB(1), in man(7) troff. The hand-written sections of
// `extras_dir`/PAGE.man (qprof.man, qprof-run.man…), when there is such a file, follow OPTIONS.
std::string man_page(const CLI::App& app, const CLI::App* sub, const std::string& extras_dir);

}  // namespace qprof::cli
