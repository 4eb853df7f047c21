// SPDX-License-Identifier: Apache-2.0
// Named temporary files that SIGINT, SIGTERM or SIGHUP remove before qprof dies of the signal,
// for OutputFile: a named temporary exists only where the file system has no O_TMPFILE, or for
// the instant between linking an unnamed file in and renaming it over its target.
#pragma once

#include <string>

namespace qprof::detail {

// Registers `path` for removal on those signals; -1 when it cannot be (every slot taken, or a
// path too long), and then only the caller's own cleanup removes it. Handlers are installed only
// where the signal's disposition is the default one: a program's own handling (qprof run relays
// signals to its job and ends normally) is kept, and its destructors remove the file.
int guard_unlink_on_signal(const std::string& path);
// Forgets the path of `slot` (from guard_unlink_on_signal; -1 is ignored).
void release_unlink_on_signal(int slot);

}  // namespace qprof::detail
