// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/group_leader.hpp"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace qprof::record {
namespace {

// In the forked placeholder: only async-signal-safe calls (qprof has other threads).
[[noreturn]] void be_placeholder(pid_t parent) {
  sigset_t all;
  sigfillset(&all);
  sigprocmask(SIG_BLOCK, &all, nullptr);  // what the group is sent is the command's, not its
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(0);  // qprof died before the death signal was armed
  // No descriptor of qprof's kept open: the job's stderr pipe and qprof's stdout must see their
  // end when the last real writer closes them.
  ::close_range(0, ~0U, 0);
  while (true) ::pause();
}

}  // namespace

GroupLeader::GroupLeader() {
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) be_placeholder(parent);
  if (pid < 0) return;
  // Also from here (as shells do): the command may join the group before the child ran.
  if (::setpgid(pid, pid) != 0 && errno != EACCES) {
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return;
  }
  pid_ = pid;
}

GroupLeader::~GroupLeader() {
  if (pid_ <= 0) return;
  ::kill(pid_, SIGKILL);
  while (::waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace qprof::record
