// SPDX-License-Identifier: Apache-2.0
// A process group for the command that the command does not lead.
//
// Without a controlling terminal the command gets a process group of its own, so that qprof's
// forwarded signal is its one delivery, to its whole group (session/exit_tracker.cpp). Were the
// command that group's leader, `setsid CMD` would fork and return 0 at once (setsid(2) refuses a
// group leader) and the command's exit status would be lost. The leader is therefore a
// placeholder: a child of qprof, forked before the tree is primed (an outsider, never counted),
// with every descriptor closed and every signal blocked, that waits for qprof's SIGKILL (or
// qprof's death).
#pragma once

#include <sys/types.h>

namespace qprof::record {

class GroupLeader {
 public:
  GroupLeader();   // pid() is -1 when the placeholder could not be started
  ~GroupLeader();  // kills and reaps it
  GroupLeader(const GroupLeader&) = delete;
  GroupLeader& operator=(const GroupLeader&) = delete;

  // The group's ID (the placeholder's PID), or -1.
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
};

}  // namespace qprof::record
