// SPDX-License-Identifier: Apache-2.0
// A helper process of a GPU backend (nvidia-smi -lms, the rocm-smi shell): started through
// Boost.Process (common/child_process.hpp) with its stdout (and optionally stdin) on pipes, in a
// process group of its own (a Ctrl-C at the terminal is for the job, not for it), with default
// signal dispositions (so it dies of SIGPIPE when qprof is gone), and stopped through a pidfd,
// which never signals a reused PID even when the run loop's waitpid(-1) reaped it first.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "qprof/common/failure.hpp"

namespace qprof::gpu::detail {

class Child {
 public:
  Child() = default;
  ~Child() { stop(); }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // argv[0] is a path. The Failure says why it cannot start.
  Result<void> start(const std::vector<std::string>& argv, bool with_stdin);
  // Closes the pipes, SIGTERM, up to 1 s for it to exit, then SIGKILL; reaps it if still ours.
  void stop();

  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }
  int out_fd() const { return out_; }
  bool eof() const { return eof_; }
  // Writes all of `s` to its stdin; false when it cannot.
  bool write(std::string_view s);
  // Reads what its stdout has now (non-blocking) and calls on_line for every complete line.
  // Returns false once at the end of its output.
  template <class F>
  bool read_lines(F&& on_line) {
    if (!fill()) return false;
    std::size_t start = 0;
    for (std::size_t nl; (nl = buf_.find('\n', start)) != std::string::npos; start = nl + 1) {
      on_line(std::string_view(buf_).substr(start, nl - start));
    }
    buf_.erase(0, start);
    return !eof_;
  }

 private:
  bool fill();
  pid_t pid_ = -1;
  int pidfd_ = -1;
  int out_ = -1;
  int in_ = -1;
  bool eof_ = false;
  std::string buf_;
};

// The most a helper's output is held: a lying or broken nvidia-smi/rocm-smi never grows qprof
// (a line longer than 1 MiB is cut in read_lines, an answer longer than this is refused).
inline constexpr std::size_t kMaxHelperOutput = std::size_t{16} << 20;

// Runs argv to its end (at most timeout_ms, then it is killed) and returns its stdout (at most
// kMaxHelperOutput: a Failure beyond, as when it cannot start, or fails with no output).
Result<std::string> run_capture(const std::vector<std::string>& argv, int timeout_ms);

}  // namespace qprof::gpu::detail
