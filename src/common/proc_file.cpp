// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/proc_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

namespace qprof {

ProcFile::ProcFile(const std::string& path) { fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC); }

ProcFile ProcFile::adopt(int fd) {
  ProcFile f;
  f.fd_ = fd;
  return f;
}

ProcFile::~ProcFile() {
  if (fd_ >= 0) ::close(fd_);
}

ProcFile::ProcFile(ProcFile&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

ProcFile& ProcFile::operator=(ProcFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

ssize_t ProcFile::read(char* buf, std::size_t cap) const {
  if (fd_ < 0) {
    errno = EBADF;
    return -1;
  }
  ssize_t n;
  do {
    n = ::pread(fd_, buf, cap, 0);
  } while (n < 0 && errno == EINTR);
  return n;
}

ProcDir::ProcDir(const std::string& path)
    : dir_(ProcFile::adopt(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC))) {}

ProcFile ProcDir::open(const char* name) const {
  if (!dir_.is_open()) return {};
  return ProcFile::adopt(::openat(dir_.fd(), name, O_RDONLY | O_CLOEXEC));
}

bool read_small_file(const std::string& path, std::string& out, std::size_t limit) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  out.clear();
  char buf[4096];
  bool ok = true;
  while (out.size() < limit) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) ok = false;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return ok;
}

}  // namespace qprof
