#include "qprof/common/find_program.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

namespace qprof {
namespace {

bool executable_file(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::string find_program(const std::string& name, const std::string& dirs) {
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos) return executable_file(name) ? name : std::string();
  std::string path = dirs;
  if (path.empty()) {
    const char* env = std::getenv("PATH");
    path = env ? env : "/usr/local/bin:/usr/bin:/bin";
  }
  std::size_t start = 0;
  while (true) {
    const std::size_t colon = path.find(':', start);
    std::string dir = path.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (dir.empty()) dir = ".";
    std::string candidate = dir + "/" + name;
    if (executable_file(candidate)) return candidate;
    if (colon == std::string::npos) return {};
    start = colon + 1;
  }
}

}  // namespace qprof
