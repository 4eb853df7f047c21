// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/trace_output.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <thread>

#include "qprof/common/safe_text.hpp"

namespace qprof::record {
namespace {

std::string why(const std::string& what, int err) { return what + ": " + std::strerror(err); }

bool is_stream(mode_t mode) { return S_ISFIFO(mode) || S_ISSOCK(mode); }
bool is_device(mode_t mode) { return S_ISCHR(mode) || S_ISBLK(mode); }

std::string device_refusal(const std::string& path) {
  return path + " is a device, not a file: a trace needs a file, a pipe, or - (stdout)";
}

// A regular file: locked (a second qprof on it is refused before its command starts), and
// emptied by the session once the command has started (to_empty). Truncating only once the lock
// is held keeps another run's trace intact. A file that is empty already is not truncated: on
// ext4 a truncation to zero makes the last close start the file's writeback at once
// (auto_da_alloc), a cost at every exit for nothing to protect.
Result<TraceOutput> take_regular(int fd, const std::string& path, bool created) {
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return Failure{path + " is being written by another qprof that is still running; choose another -o"};
    }
    return Failure{why("cannot lock " + path, err)};
  }
  struct stat st {};
  const bool to_empty = ::fstat(fd, &st) != 0 || st.st_size != 0;
  // Through /proc: the descriptor's own file, whatever its path names by then (the write end
  // has no read access, and the path may be renamed or replaced at any time).
  const int read_fd = ::open(("/proc/self/fd/" + std::to_string(fd)).c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  return TraceOutput{fd, path, read_fd >= 0, read_fd, created, to_empty};
}

Result<TraceOutput> open_named(const std::string& path, const Speaker& speaker) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && is_device(st.st_mode)) return Failure{device_refusal(path)};
  // No O_TRUNC: the file may be another live qprof's, which the lock tells only once it is open.
  // A FIFO waits for its reader, as a shell redirection does, but not silently: a first open
  // with O_NONBLOCK fails with ENXIO when no reader is there, and qprof says what it waits for.
  int fd = -1;
  if (S_ISFIFO(st.st_mode)) {
    // A probe that found a reader is the descriptor: closed, it would be the reader's end of
    // file (cat stops) before the real open, which then waits for a reader that is gone.
    const int probe = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (probe >= 0) {
      ::fcntl(probe, F_SETFL, ::fcntl(probe, F_GETFL) & ~O_NONBLOCK);
      fd = probe;
    } else if (errno == ENXIO) {
      speaker.line(terminal_text(path) + " is a FIFO with no reader yet: waiting for one before the command starts");
    }
  }
  bool created = false;
  if (fd < 0) fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0 && errno == ENOENT) {
    fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0644);
    created = fd >= 0;
  }
  if (fd < 0) return Failure{why("cannot create " + path, errno)};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Failure{why("cannot create " + path, err)};
  }
  if (is_stream(st.st_mode)) return TraceOutput{fd, path, false};
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Failure{device_refusal(path)};
  }
  return take_regular(fd, path, created);
}

Result<TraceOutput> open_default(const JobIdentity& identity) {
  // The name is unique to this process and millisecond; a leftover of an earlier process with the
  // same PID in the same millisecond is the only clash, and the next millisecond resolves it.
  for (int attempt = 0; attempt < 100; ++attempt) {
    const std::string path = default_trace_name(identity);
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0644);
    if (fd >= 0) return take_regular(fd, path, true);
    if (errno != EEXIST) return Failure{why("cannot create " + path, errno)};
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return Failure{"cannot create a trace of a name of its own here (" + default_trace_name(identity) + " exists)"};
}

Result<TraceOutput> open_stdout() {
  struct stat st {};
  if (::fstat(STDOUT_FILENO, &st) != 0) return Failure{why("-o -: stdout", errno)};
  const int fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
  if (fd < 0) return Failure{why("-o -: stdout", errno)};
  // The command's stdout (and qprof's) goes to stderr, so that stdout carries the trace alone.
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
  return TraceOutput{fd, "-", false};
}

}  // namespace

Result<TraceOutput> open_trace_output(const std::string& requested, const JobIdentity& identity,
                                      const Speaker& speaker) {
  if (requested.empty()) return open_default(identity);
  if (requested == "-") return open_stdout();
  return open_named(requested, speaker);
}

std::string default_trace_name(const JobIdentity& identity) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm local{};
  localtime_r(&seconds, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d%H%M%S", &local);
  // Ranks of one job start together: host and rank name them; milliseconds and the PID keep any
  // two runs apart.
  std::string rank;
  if (identity.job.rank) {
    if (const auto expanded = expand_output("%h.r%r_", identity, 0, 0)) rank = *expanded;
  }
  char tail[48];
  std::snprintf(tail, sizeof tail, ".%03d_%d.dat", static_cast<int>(ms), static_cast<int>(::getpid()));
  return "qprof_" + rank + stamp + tail;
}

}  // namespace qprof::record
