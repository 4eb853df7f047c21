// SPDX-License-Identifier: Apache-2.0
#include "qprof/fit/systemd_scope.hpp"

#include <unistd.h>

#include "qprof/common/find_program.hpp"

namespace qprof::fit {

std::vector<std::string> delegated_scope_argv(const std::string& unit, const std::string& exe,
                                              const std::vector<std::string>& args) {
  std::vector<std::string> argv{"systemd-run", "--user",       "--scope",        "--quiet", "--collect",
                                "-p",          "Delegate=yes", "--unit=" + unit, "--",      exe};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

bool systemd_user_manager_available(const std::string& cgroup_root,
                                    const std::function<const char*(const char*)>& getenv) {
  if (::access((cgroup_root + "/cgroup.controllers").c_str(), R_OK) != 0) return false;
  if (find_program("systemd-run").empty()) return false;
  const char* runtime = getenv("XDG_RUNTIME_DIR");
  return runtime != nullptr && *runtime != '\0' &&
         ::access((std::string(runtime) + "/systemd/private").c_str(), F_OK) == 0;
}

std::optional<std::vector<std::string>> rerun_in_scope_argv(bool may_create_groups, bool in_scope,
                                                            bool manager_available, const std::string& exe,
                                                            const std::vector<std::string>& cmdline) {
  if (may_create_groups || in_scope || !manager_available || exe.empty() || cmdline.empty()) return std::nullopt;
  const std::vector<std::string> args(cmdline.begin() + 1, cmdline.end());
  return delegated_scope_argv("qprof-fit-" + std::to_string(::getpid()), exe, args);
}

}  // namespace qprof::fit
