// SPDX-License-Identifier: Apache-2.0
// What every program qprof starts through Boost.Process shares: the profiled command
// (record/launcher.cpp), gnuplot (plot/gnuplot.cpp) and the GPU helpers (gpu/child.cpp).
//
// Boost.Process v1 (boost/process/child.hpp, Debian 12's Boost 1.74; v2 first came with Boost
// 1.80) forks and execs, and runs our set-up between the two through its exec-setup hook. It is
// always started with bp::ignore_error and an ExecReport, for two reasons found in its executor
// (boost/process/detail/posix/executor.hpp):
//   - without ignore_error it reports exec's failure over a pipe made with pipe() and only then
//     marked close-on-exec: a fork on another of qprof's threads in between (the GPU helper
//     thread starts nvidia-smi) inherits the write end, and the parent then waits for that other
//     program to end; and it reads the report inside the executor, so the parent could do no work
//     of its own while the child execs (record/launcher.hpp's while_exec);
//   - without ignore_error a failed exec also assigns a std::string in the child.
// With ignore_error the child runs only the hooks, execve and _exit. Everything here that runs
// in the child is async-signal-safe: qprof has other threads, whose locks the child would inherit
// held (so Boost's limit_handles, which lists /dev/fd with opendir in the child, is not used).
//
// The bp::child is detached as soon as it is made: qprof reaps its children itself (the run
// loop's waitpid(-1) as the tree's subreaper, gnuplot's watchdog), and an attached bp::child
// would waitpid and kill on destruction behind their backs. Nothing of Boost.Process that
// touches SIGCHLD (bp::on_exit, wait_for, bp::posix::sig) is used.
#pragma once

#include <sys/types.h>

// Before Boost.Process: Boost 1.74's boost/process/detail/posix/handles.hpp uses
// std::unique_ptr without including <memory>.
#include <memory>
#include <boost/process/extend.hpp>
#include <optional>
#include <span>

#include "qprof/common/failure.hpp"
#include <system_error>

#include "qprof/common/sigpipe.hpp"

namespace qprof::child_process {

// What a child says when it could not become the program: the step it was at (kExec, or a step
// of the caller's own set-up given to ExecReport::fail) and the errno.
struct Failure {
  int step = 0;
  int error = 0;
};
inline constexpr int kExec = 0;  // exec itself (or the fork before it)

// A Boost.Process initializer that carries a child's failure back to the parent over a
// close-on-exec pipe (made with pipe2 before fork, above descriptor 2): a failed exec through
// Boost's exec-error hook, a failed step of the caller's set-up through fail(). An exec that
// works closes the pipe, and wait() returns nothing.
class ExecReport : public boost::process::extend::handler {
 public:
  // The pipe made (a Failure, "pipe: REASON", when there is none).
  static qprof::Result<std::unique_ptr<ExecReport>> open();
  ~ExecReport();
  ExecReport(const ExecReport&) = delete;
  ExecReport& operator=(const ExecReport&) = delete;

  template <class Executor>
  void on_fork_error(Executor&, const std::error_code& ec) const {
    fork_error_ = ec.value();
  }
  template <class Executor>
  void on_exec_error(Executor&, const std::error_code& ec) const {
    fail(kExec, ec.value());
  }

  // In the child: reports `error` at `step` and ends the child with status 127.
  [[noreturn]] void fail(int step, int error) const noexcept;
  // The child's end of the pipe (close_from() leaves it open).
  int child_fd() const { return write_; }
  // In the parent, once bp::child returned: nothing when the child exec'd, else what failed.
  std::optional<Failure> wait();

 private:
  ExecReport(int read, int write) : read_(read), write_(write) {}
  int read_ = -1;
  int write_ = -1;
  mutable int fork_error_ = 0;
};

// In the child: an empty signal mask, the default disposition of each of `signals` (qprof
// ignores or catches them; a program expects what a shell would have given it), and SIGPIPE as
// whoever started qprof left it (see ignore_sigpipe_in_qprof).
void default_signals(std::span<const int> signals) noexcept;

// In the child: closes every descriptor from `first` up but `keep` (close_range, one system
// call). False, with errno, when it could not.
bool close_from(int first, int keep) noexcept;

}  // namespace qprof::child_process
