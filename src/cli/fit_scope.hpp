// SPDX-License-Identifier: Apache-2.0
#pragma once

namespace qprof::cli {

// Where qprof may not create memory cgroups, is not yet in a scope of its own and a systemd user
// manager answers, replaces this process by `systemd-run --user --scope -p Delegate=yes -- qprof
// fit ...` (said on stderr). Returns where it did not (nothing to do, or exec failed: said).
void rerun_fit_in_user_scope_if_needed();

}  // namespace qprof::cli
