// SPDX-License-Identifier: Apache-2.0
// Where qprof may not create memory cgroups itself but a systemd user manager runs (a cgroup v2
// desktop or login session), qprof fit runs itself again as a transient scope of that manager
// with the scope's cgroup delegated to it: inside, qprof is the only process of its scope, moves
// itself into a leaf (record/cgroup.hpp, move_self_to_leaf) and creates each probe's group with
// its limit below, as it does as root.
#pragma once

#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace qprof::fit {

// Set in the environment of the qprof that runs inside the scope: it never asks for another.
inline constexpr const char* kInScopeVariable = "QPROF_FIT_IN_SCOPE";

// systemd-run --user --scope --quiet --collect -p Delegate=yes --unit=UNIT -- EXE ARGS...: the
// scope takes the command's place (systemd-run execs it), so qprof's PID, its terminal and its
// exit status stay the caller's. ARGS follow "--", never read as systemd-run's options.
std::vector<std::string> delegated_scope_argv(const std::string& unit, const std::string& exe,
                                              const std::vector<std::string>& args);

// Whether a systemd user manager answers here: a cgroup v2 machine (`cgroup_root` has
// cgroup.controllers), systemd-run on PATH, and the manager's socket under $XDG_RUNTIME_DIR.
bool systemd_user_manager_available(
    const std::string& cgroup_root = "/sys/fs/cgroup",
    const std::function<const char*(const char*)>& getenv = [](const char* name) { return std::getenv(name); });

// The command line that runs qprof again in a delegated scope, or nullopt where that cannot help:
// qprof may create its groups already, it runs in such a scope already, or no manager answers.
// `cmdline` is qprof's own argv (argv[0] is replaced by `exe`).
std::optional<std::vector<std::string>> rerun_in_scope_argv(bool may_create_groups, bool in_scope,
                                                            bool manager_available, const std::string& exe,
                                                            const std::vector<std::string>& cmdline);

}  // namespace qprof::fit
