// SPDX-License-Identifier: Apache-2.0
// What a run sets up in qprof's own process before the command starts.
#pragma once

#include <sys/resource.h>

#include <memory>
#include <optional>
#include <string>

#include "notices.hpp"
#include "qprof/common/speaker.hpp"
#include "qprof/common/types.hpp"
#include "qprof/record/pty.hpp"

namespace qprof::record::session {

// Every member keeps a few /proc files open: qprof allows itself as many descriptors as the hard
// limit. Returns the limit qprof was started with, which the command gets back.
rlimit raise_files_limit();

// Without a controlling terminal (CI, services) the command gets a process group of its own;
// with one it stays in qprof's, so that job control and the terminal's keys work as before.
bool has_controlling_terminal();

// qprof's own peak RSS so far, VmHWM (the command's pre-exec copy of qprof is no larger).
Bytes own_peak_rss();

std::string host_name();

// The job's stderr, which the tee reads: at a terminal a pty of qprof's (so that it is a
// terminal in the job too), else a pipe. Both ends close-on-exec; the pty lives for the run.
struct JobStderr {
  std::unique_ptr<StderrPty> pty;  // restores SIGWINCH's handler when it goes
  int read = -1;
  int write = -1;
};
// nullopt: no pipe could be made (said through `speaker`).
std::optional<JobStderr> open_job_stderr(Notices& notices, const Speaker& speaker);

}  // namespace qprof::record::session
