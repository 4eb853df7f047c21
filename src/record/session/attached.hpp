// SPDX-License-Identifier: Apache-2.0
// qprof attach: the session follows a process it did not start. What differs from a run: no
// launch, no stderr (the process's is not qprof's), its exit is learnt through a pidfd rather
// than wait4 (ExitTracker::watch_attached), its status only if /proc shows it before the parent
// reaps it, and nothing ever signals it (--timeout, Ctrl-C and SIGTERM stop the attach, not the
// process).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "qprof/common/speaker.hpp"
#include "qprof/record/attach.hpp"
#include "qprof/record/mark_channel.hpp"

namespace qprof::record::session {

// The process to follow, checked before anything is written; null when it cannot be followed
// (said through `speaker`).
std::unique_ptr<AttachedProcess> open_attached(pid_t pid, const std::string& proc_root, const Speaker& speaker);

// What the attach sees and what stops it, unless `quiet`; and, even with -q, the FIFO through
// which the process can still send markers (the summary does not name it).
void say_attached(pid_t pid, bool quiet, const MarkChannel* channel, const Speaker& speaker);

}  // namespace qprof::record::session
