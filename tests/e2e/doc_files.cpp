// SPDX-License-Identifier: Apache-2.0
#include "doc_files.hpp"

#include <algorithm>
#include <sstream>

#include "e2e_util.hpp"

namespace qprof::test {

namespace fs = std::filesystem;

fs::path source_dir() { return QPROF_TEST_SOURCE_DIR; }

std::vector<fs::path> documents() {
  std::vector<fs::path> out{source_dir() / "README.md", source_dir() / "CONTRIBUTING.md",
                            source_dir() / "CHANGELOG.md"};
  for (const auto& e : fs::directory_iterator(source_dir() / "docs")) {
    if (e.path().extension() == ".md") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> lines_of(const fs::path& p) {
  std::vector<std::string> out;
  std::istringstream in(read_file(p.string()));
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace qprof::test
