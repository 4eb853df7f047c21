// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/find_program.hpp"

#include <boost/filesystem/path.hpp>
#include <boost/process/search_path.hpp>
#include <cstdlib>
#include <vector>

namespace qprof {

std::string find_program(const std::string& name, const std::string& dirs) {
  namespace fs = boost::filesystem;
  if (name.empty()) return {};
  // A name with a '/' is looked for in its own folder alone: the same test of an executable
  // regular file as in a search.
  if (name.find('/') != std::string::npos) {
    const fs::path path(name);
    const fs::path found = boost::process::search_path(path.filename(), {path.parent_path()});
    return found.empty() ? std::string() : name;
  }
  // The folders are split here rather than by Boost's this_process::path(): `dirs` may be given
  // (the GPU backends' search folders), an unset PATH means the shells' defaults, and an empty entry
  // means the current folder ("./name", where Boost would return a bare "name").
  std::string path = dirs;
  if (path.empty()) {
    const char* env = std::getenv("PATH");
    path = env ? env : "/usr/local/bin:/usr/bin:/bin";
  }
  std::vector<fs::path> folders;
  for (std::size_t start = 0;;) {
    const std::size_t colon = path.find(':', start);
    const std::string dir = path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    folders.emplace_back(dir.empty() ? "." : dir);
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return boost::process::search_path(name, folders).string();
}

}  // namespace qprof
