// SPDX-License-Identifier: Apache-2.0
// A /proc file kept open and re-read with pread: no path walk per sample (statm: ≈0.5 µs instead
// of ≈2 µs), and a descriptor of a reaped process fails with ESRCH instead of ever showing the
// process that reuses its PID.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

namespace qprof {

class ProcFile {
 public:
  ProcFile() = default;
  explicit ProcFile(const std::string& path);  // is_open() is false if it could not be opened
  static ProcFile adopt(int fd);               // takes ownership of an open descriptor (or -1)
  ~ProcFile();
  ProcFile(ProcFile&& other) noexcept;
  ProcFile& operator=(ProcFile&& other) noexcept;
  ProcFile(const ProcFile&) = delete;
  ProcFile& operator=(const ProcFile&) = delete;

  bool is_open() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  // Reads from offset 0; returns the byte count, or -1 with errno set (ESRCH: the process is gone).
  ssize_t read(char* buf, std::size_t cap) const;

 private:
  int fd_ = -1;
};

// A /proc/PID directory kept open (O_PATH). It names one process for that process's whole life:
// a file opened through it after the process is reaped fails, even when the PID has been reused.
// Files that pin what they show at open (smaps_rollup shows the address space the process had
// when it was opened, and nothing once that process execs) are opened afresh through it.
class ProcDir {
 public:
  ProcDir() = default;
  explicit ProcDir(const std::string& path);
  bool is_open() const { return dir_.is_open(); }
  ProcFile open(const char* name) const;  // is_open() is false if it could not be opened

 private:
  ProcFile dir_;
};

// Reads a whole small file by path (open, read, close); returns false if it cannot.
bool read_small_file(const std::string& path, std::string& out, std::size_t limit = 1 << 16);

}  // namespace qprof
