// SPDX-License-Identifier: Apache-2.0
#include "qprof/fit/systemd_scope.hpp"

#include <unistd.h>

#include <cstdlib>

#include "qprof/common/find_program.hpp"

namespace qprof::fit {

std::vector<std::string> systemd_scope_argv(const std::string& unit, Bytes limit, const std::vector<std::string>& command) {
  std::vector<std::string> argv{"systemd-run", "--user", "--scope", "--quiet", "--collect", "--unit=" + unit,
                                "-p", "MemoryMax=" + (limit ? std::to_string(limit) : std::string("infinity")),
                                "-p", "MemorySwapMax=0", "--"};
  argv.insert(argv.end(), command.begin(), command.end());
  return argv;
}

bool systemd_user_manager_available(const std::string& cgroup_root,
                                    const std::function<const char*(const char*)>& getenv) {
  if (::access((cgroup_root + "/cgroup.controllers").c_str(), R_OK) != 0) return false;
  if (find_program("systemd-run").empty()) return false;
  const char* runtime = getenv("XDG_RUNTIME_DIR");
  return runtime != nullptr && *runtime != '\0' && ::access((std::string(runtime) + "/systemd/private").c_str(), F_OK) == 0;
}

}  // namespace qprof::fit
