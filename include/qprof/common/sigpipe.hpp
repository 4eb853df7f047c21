// SPDX-License-Identifier: Apache-2.0
// SIGPIPE in qprof and in the programs it starts (defined in common/child_process.cpp, which gives
// it back to every child). A header of its own: main needs it without Boost.Process.
#pragma once

namespace qprof::child_process {

// Called first thing in main: qprof's own writes never die of SIGPIPE. A closed stdout or stderr
// (`qprof run ... 2>&1 | head -1`) makes write(2) fail with EPIPE instead, which the outputs
// check, so the results, the cgroup's removal and the job's exit status survive it. An ignored
// disposition passes through exec: every program qprof starts gets SIGPIPE back as qprof found it
// (default_signals, restore_sigpipe).
void ignore_sigpipe_in_qprof() noexcept;
// SIGPIPE as qprof found it, before an exec that replaces qprof itself (async-signal-safe).
void restore_sigpipe() noexcept;

}  // namespace qprof::child_process
