// SPDX-License-Identifier: Apache-2.0
// Running the built qprof binary (and other programs) from the end-to-end tests.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "qprof/trace/trace.hpp"

namespace qprof::test {

// Paths baked in by tests/CMakeLists.txt.
std::string qprof_bin();
std::string workload(const std::string& name);
std::string data_file(const std::string& relative);
std::string mprof_bin();
std::string debian_python();

// A fresh directory for one test's files, removed at exit.
std::string temp_dir();
// An empty directory `name` under temp_dir(), made (or emptied) for one test's files.
std::string fresh_dir(const std::string& name);
// A copy of the executable `path` in a directory every user can reach (mode 0777 under the
// test's temporary directory): the build may live where another user cannot go (a clone under
// /root, mode 0700), and the tests that run qprof or a workload as another user run this copy.
std::string copy_for_other_users(const std::string& path);

struct Result {
  int status = -1;  // exit status, or 128 + signal
  std::string out;
  std::string err;
};

// A started program with its stdout and stderr captured (stdin from `input`).
class Process {
 public:
  explicit Process(const std::vector<std::string>& argv, const std::string& input = "");
  ~Process();
  pid_t pid() const { return pid_; }
  // Waits for the end (killing it after timeout_s) and returns what it wrote.
  Result wait(int timeout_s = 120);

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1, err_fd_ = -1;
  Result result_;
  bool waited_ = false;
};

Result run(const std::vector<std::string>& argv, const std::string& input = "", int timeout_s = 120);
// qprof with these arguments.
Result qprof(const std::vector<std::string>& args, const std::string& input = "", int timeout_s = 120);

// A qprof built with AddressSanitizer (-DQPROF_SANITIZE=ON).
bool sanitized();
// prlimit's address-space bound around qprof, "--as=BYTES". An AddressSanitizer qprof reserves
// terabytes of address space for its shadow memory, so there it is "--as=unlimited" and ASan's
// own hard_rss_limit_mb (set by scripts/test) bounds the process instead.
std::string as_limit(const std::string& bytes);

inline double mib(Bytes b) { return static_cast<double>(b) / (1024.0 * 1024.0); }
Bytes max_mem(const trace::Trace& t);
std::string read_file(const std::string& path);
void write_file(const std::string& path, const std::string& text);
// A summary's wrapped lines joined again (a continuation starts with spaces): what a test
// looks for may span a line break at 80 columns.
std::string unwrapped(const std::string& summary);
// qprof fit's stderr with each wrapped line joined again: a continuation is indented 4 or more
// columns deeper than the line it continues. As lines, and as one text.
std::vector<std::string> sentences(const std::string& err);
std::string joined(const std::string& err);

}  // namespace qprof::test
