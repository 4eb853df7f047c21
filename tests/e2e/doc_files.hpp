// SPDX-License-Identifier: Apache-2.0
// The documents the docs tests read: README.md, CONTRIBUTING.md, CHANGELOG.md and docs/*.md.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace qprof::test {

// The source tree's root.
std::filesystem::path source_dir();
// README.md, CONTRIBUTING.md, CHANGELOG.md and docs/*.md, sorted.
std::vector<std::filesystem::path> documents();
std::vector<std::string> lines_of(const std::filesystem::path& p);

}  // namespace qprof::test
