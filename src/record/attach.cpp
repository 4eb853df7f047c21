// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/attach.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "qprof/common/proc_file.hpp"
#include "qprof/common/proc_parse.hpp"

namespace qprof::record {
namespace {

int pidfd_open(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
#else
  errno = ENOSYS;
  return -1;
#endif
}

std::optional<proc::Stat> stat_of(const std::string& proc_root, pid_t pid) {
  std::string text;
  if (!read_small_file(proc_root + "/" + std::to_string(pid) + "/stat", text, 4096)) return std::nullopt;
  return proc::parse_stat(text);
}

// True if `pid` is qprof or one of its ancestors: qprof would then be in the tree it measures,
// and the tree could not end while qprof waits for it.
bool is_self_or_ancestor(const std::string& proc_root, pid_t pid) {
  pid_t p = ::getpid();
  for (int depth = 0; p > 1 && depth < 4096; ++depth) {
    if (p == pid) return true;
    const auto st = stat_of(proc_root, p);
    if (!st) return false;
    p = static_cast<pid_t>(st->ppid);
  }
  return p == pid;
}

std::vector<std::string> command_line(const std::string& proc_root, pid_t pid) {
  std::string text;
  std::vector<std::string> argv;
  if (read_small_file(proc_root + "/" + std::to_string(pid) + "/cmdline", text, 1 << 16)) {
    std::size_t start = 0;
    while (start < text.size()) {
      std::size_t end = text.find('\0', start);
      if (end == std::string::npos) end = text.size();
      argv.push_back(text.substr(start, end - start));
      start = end + 1;
    }
  }
  if (argv.empty()) {
    std::string comm;
    read_small_file(proc_root + "/" + std::to_string(pid) + "/comm", comm, 64);
    while (!comm.empty() && comm.back() == '\n') comm.pop_back();
    argv.push_back("[" + comm + "]");
  }
  return argv;
}

}  // namespace

std::optional<int> zombie_wait_status(std::string_view stat) {
  const std::size_t close = stat.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view s = stat.substr(close + 1);
  // Fields from 3 (state) on; exit_code is field 52.
  int field = 2;
  std::string_view value;
  while (!s.empty() && field < 52) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    const std::size_t sp = s.find_first_of(" \n");
    value = s.substr(0, sp);
    s.remove_prefix(sp == std::string_view::npos ? s.size() : sp);
    ++field;
    if (field == 3 && value != "Z") return std::nullopt;
  }
  if (field != 52 || value.empty()) return std::nullopt;
  int status = 0;
  const auto r = std::from_chars(value.data(), value.data() + value.size(), status);
  if (r.ec != std::errc()) return std::nullopt;
  return status;
}

AttachedProcess::AttachedProcess(pid_t pid, int pidfd, int stat_fd, std::vector<std::string> argv)
    : pid_(pid), pidfd_(pidfd), stat_fd_(stat_fd), argv_(std::move(argv)) {}

AttachedProcess::~AttachedProcess() {
  if (pidfd_ >= 0) ::close(pidfd_);
  if (stat_fd_ >= 0) ::close(stat_fd_);
}

std::variant<std::unique_ptr<AttachedProcess>, std::string> AttachedProcess::open(pid_t pid,
                                                                                  const std::string& proc_root) {
  const std::string name = "process " + std::to_string(pid);
  if (pid <= 0) return "attach: " + std::to_string(pid) + " is not a process ID";
  if (pid == ::getpid()) return "attach: " + std::to_string(pid) + " is qprof itself";
  if (is_self_or_ancestor(proc_root, pid)) {
    return "attach: " + name + " is an ancestor of qprof: qprof would be part of the tree it measures";
  }
  // The pidfd first: it names the process for good, before its /proc files are opened.
  int pidfd = pidfd_open(pid);
  const int pidfd_errno = errno;
  if (pidfd < 0 && pidfd_errno == ESRCH) return "attach: no " + name;
  const std::string dir = proc_root + "/" + std::to_string(pid);
  const int stat_fd = ::open((dir + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
  if (stat_fd < 0) {
    const int err = errno;
    if (pidfd >= 0) ::close(pidfd);
    if (err == ENOENT && pidfd >= 0) {
      return "attach: " + name + " exists but " + proc_root +
             " hides it from qprof (mounted with hidepid): run qprof as its user or as root";
    }
    if (err == ENOENT) return "attach: no " + name;
    return "attach: cannot read " + dir + "/stat: " + std::strerror(err);
  }
  auto close_all = [&] {
    if (pidfd >= 0) ::close(pidfd);
    ::close(stat_fd);
  };
  char buf[1024];
  const ssize_t n = ::pread(stat_fd, buf, sizeof buf, 0);
  const auto st = n > 0 ? proc::parse_stat(std::string_view(buf, static_cast<std::size_t>(n))) : std::nullopt;
  if (!st) {
    close_all();
    return "attach: no " + name;
  }
  if (st->state == 'Z' || st->state == 'X') {
    close_all();
    return "attach: " + name + " has exited already (a zombie its parent has not reaped)";
  }
  // kthreadd (PID 2) and its children have no user memory: the trace would say 0 B throughout.
  if (pid == 2 || st->ppid == 2) {
    close_all();
    return "attach: " + name + " is a kernel thread: it has no memory of its own to follow";
  }
  // Memory, CPU and I/O figures need the right to inspect the process (ptrace's read mode): a
  // process of another user (or of a more privileged one) reads as permission denied.
  for (const char* file : {"io", "smaps_rollup"}) {
    const int fd = ::open((dir + "/" + file).c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      char probe[1];
      const bool readable = ::read(fd, probe, sizeof probe) >= 0 || (errno != EACCES && errno != EPERM);
      ::close(fd);
      if (readable) continue;
    }
    const int err = errno;
    if (err == EACCES || err == EPERM) {
      close_all();
      return "attach: qprof may not read the figures of " + name + " (" + dir + "/" + file + ": " + std::strerror(err) +
             "): it belongs to another user; run qprof as that user or as root";
    }
  }
  return std::unique_ptr<AttachedProcess>(new AttachedProcess(pid, pidfd, stat_fd, command_line(proc_root, pid)));
}

bool AttachedProcess::exited() {
  if (exited_) return true;
  if (pidfd_ >= 0) {
    pollfd p{pidfd_, POLLIN, 0};
    exited_ = ::poll(&p, 1, 0) > 0 && (p.revents & (POLLIN | POLLHUP)) != 0;
    return exited_;
  }
  char buf[1024];
  const ssize_t n = ::pread(stat_fd_, buf, sizeof buf, 0);
  if (n <= 0) return exited_ = true;  // reaped: the kept descriptor fails
  const auto st = proc::parse_stat(std::string_view(buf, static_cast<std::size_t>(n)));
  exited_ = !st || st->state == 'Z' || st->state == 'X';
  return exited_;
}

std::optional<int> AttachedProcess::wait_status() const {
  char buf[1024];
  const ssize_t n = ::pread(stat_fd_, buf, sizeof buf, 0);
  if (n <= 0) return std::nullopt;
  return zombie_wait_status(std::string_view(buf, static_cast<std::size_t>(n)));
}

}  // namespace qprof::record
