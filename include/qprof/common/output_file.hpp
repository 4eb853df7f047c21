// SPDX-License-Identifier: Apache-2.0
// One way to write an output file, for every writer (report --yaml, run --yaml and --yaml-stream,
// export -o, plot -o). What is at the path decides how it is written, and nothing is ever
// replaced that is not a regular file (a root `--yaml /dev/full` once replaced the device):
//
//   missing, or a regular file   replaced whole and atomically: the bytes go into an unnamed file
//                                (O_TMPFILE) beside it that commit() links in, so a reader sees the
//                                old file or the new one, and a writer that fails or is killed
//                                (SIGKILL too) leaves nothing. Where the file system has no
//                                O_TMPFILE, a hidden ".NAME.XXXXXXXX.tmp", removed by the
//                                destructor and, while it exists, by SIGINT, SIGTERM and SIGHUP.
//                                The file keeps the permission bits, owner and group of the one
//                                it replaces; one whose owner cannot be kept (another user's) or
//                                that has other hard links is refused, never taken over.
//   a symbolic link              followed: the file it names is written by these rules (replaced
//                                when regular or missing), and the link stays a link.
//   "-", /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N
//                                that descriptor, written where it stands (/dev/stdout is a link
//                                that must never be replaced, whatever fd 1 is).
//   a FIFO or a character device (a terminal, /dev/null)
//                                opened and written in place, never replaced. Opening a FIFO
//                                waits for its reader, as a shell's `>` does.
//   anything else                refused (a Failure): a directory, a block device, a socket.
//
// Every step returns a Result: its Failure is one sentence naming the path (and what is there,
// when that is the reason), status 2, for the CLI to print.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "qprof/common/failure.hpp"

namespace qprof {

namespace detail {
struct OutputTarget;
}

class OutputFile {
 public:
  // How a replacement is staged. `unnamed_if_possible` is every writer's; `named` is what a file
  // system without O_TMPFILE gets, chosen by the tests of that path.
  enum class Temporary { unnamed_if_possible, named };

  // Opens `path` for writing by the rules above, or says why it cannot be written.
  static Result<std::unique_ptr<OutputFile>> open(std::string path,
                                                  Temporary temporary = Temporary::unnamed_if_possible);
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  // Without commit(): nothing is replaced and the temporary is gone.
  ~OutputFile();

  const std::string& path() const { return path_; }
  int fd() const { return fd_; }
  // True when commit() replaces a file; false when the bytes go straight to their reader.
  bool replaces() const { return replace_; }
  Result<void> write(std::string_view bytes);  // all of them
  // Puts the file in place (replacements) and closes what this object opened.
  Result<void> commit();

 private:
  explicit OutputFile(std::string path) : path_(std::move(path)) {}
  Result<void> open_target(Temporary temporary);
  Result<void> open_replacement(Temporary temporary);
  Result<void> keep_owner_and_mode(const detail::OutputTarget& t);
  Result<void> link_in();
  Result<void> put_in_place();
  void discard();
  Failure failed(const std::string& what, int error) const;

  std::string path_;    // as the user gave it: for messages
  std::string target_;  // the file written or replaced, symbolic links followed
  std::string named_;   // the named temporary, while it exists
  int fd_ = -1;
  bool owns_fd_ = false;
  bool replace_ = false;
  bool committed_ = false;
  int named_guard_ = -1;  // the signal handler's slot for named_
};

// `text` into `path` by OutputFile's rules.
Result<void> write_output(const std::string& path, std::string_view text);

// Fails when the output `path` is one of `inputs` (or another output): the same file (device and
// inode, links and /dev/stdout followed), or the same path when it does not exist yet. Checked
// before any byte is written: an output never eats what qprof reads.
Result<void> refuse_output_over(const std::string& path, const std::vector<std::string>& inputs);

// A name qprof makes up (sweep's DIR/NAME=V.dat, compare --run's PREFIX-N.dat) created empty
// with O_CREAT|O_EXCL|O_NOFOLLOW: nothing already there is ever written through, a link planted
// at the name included. When `wanted` is taken, the first free STEM~K.EXT (K = 2, 3, ...).
// Returns the name created.
Result<std::string> create_fresh(const std::string& wanted);

// Fails when `path` could not be written by OutputFile's rules: checked before a long job, so
// that a bad path fails first. Writes nothing and opens no FIFO (that would wait).
Result<void> check_output(const std::string& path);

}  // namespace qprof
