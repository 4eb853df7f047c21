// SPDX-License-Identifier: Apache-2.0
// `qprof attach PID`: a process qprof did not start. Checks that it can be followed (it exists,
// qprof may read its /proc files, it is not qprof nor one of qprof's ancestors), learns of its
// exit without being its parent (pidfd_open + poll; a kept /proc/PID/stat where pidfd is
// missing) and reads the wait status /proc shows while it is a zombie. It never signals it.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace qprof::record {

class AttachedProcess {
 public:
  // The process, or why it cannot be followed (one line, for "qprof: …"; exit status 2).
  static std::variant<std::unique_ptr<AttachedProcess>, std::string> open(pid_t pid,
                                                                          const std::string& proc_root = "/proc");
  ~AttachedProcess();
  AttachedProcess(const AttachedProcess&) = delete;
  AttachedProcess& operator=(const AttachedProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Its command line (/proc/PID/cmdline), or its name in brackets for a kernel-less argv.
  const std::vector<std::string>& argv() const { return argv_; }
  // True once it has exited (a zombie waiting for its parent, or reaped). Never blocks.
  bool exited();
  // Its wait status, from /proc/PID/stat's exit_code while it is a zombie; nullopt once its
  // parent reaped it (the status is then lost to anyone but that parent).
  std::optional<int> wait_status() const;
  // The descriptor that polls readable at its exit (-1 without pidfd).
  int pidfd() const { return pidfd_; }

 private:
  AttachedProcess(pid_t pid, int pidfd, int stat_fd, std::vector<std::string> argv);
  pid_t pid_;
  int pidfd_;
  int stat_fd_;  // /proc/PID/stat, kept: fails with ESRCH once the process is reaped
  std::vector<std::string> argv_;
  bool exited_ = false;
};

// The wait status in a zombie's /proc/PID/stat (field 52, exit_code), if `stat` is a zombie's.
std::optional<int> zombie_wait_status(std::string_view stat);

}  // namespace qprof::record
