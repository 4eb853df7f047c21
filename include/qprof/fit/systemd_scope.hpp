// SPDX-License-Identifier: Apache-2.0
// Where qprof may not create cgroups itself but a systemd user manager runs (cgroup v2 desktops,
// login sessions): each probe runs as a transient scope of the user's manager, which creates the
// group with the limit and removes it when the command is gone.
#pragma once

#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#include "qprof/common/types.hpp"

namespace qprof::fit {

// systemd-run --user --scope --quiet --collect --unit UNIT -p MemoryMax=LIMIT -p MemorySwapMax=0
// -- CMD...: the scope takes the command's place (systemd-run execs it), so the launched PID is
// the command's; `limit` 0 gives MemoryMax=infinity (the unlimited run). The unit name is
// qprof's; the command's words follow "--", never read as systemd-run's options.
std::vector<std::string> systemd_scope_argv(const std::string& unit, Bytes limit, const std::vector<std::string>& command);

// Whether a systemd user manager answers here: a cgroup v2 machine (`cgroup_root` has
// cgroup.controllers), systemd-run on PATH, and the manager's socket under $XDG_RUNTIME_DIR.
bool systemd_user_manager_available(const std::string& cgroup_root = "/sys/fs/cgroup",
                                    const std::function<const char*(const char*)>& getenv =
                                        [](const char* name) { return std::getenv(name); });

}  // namespace qprof::fit
