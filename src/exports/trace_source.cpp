// SPDX-License-Identifier: Apache-2.0
#include "trace_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>
#include <vector>

#include "qprof/common/write_all.hpp"

namespace qprof::exports {
namespace {

// Unnamed from the start where the file system can (O_TMPFILE), else named and removed at once.
int temporary_file() {
  const char* dir = std::getenv("TMPDIR");
  const std::string where = dir && *dir ? dir : "/tmp";
  const int fd = ::open(where.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0 || (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)) return fd;
  std::string name = where + "/qprof-export-XXXXXX";
  const int named = ::mkostemp(name.data(), O_CLOEXEC);
  if (named >= 0) ::unlink(name.c_str());
  return named;
}

// `from` into `to`, at most trace::kMaxStreamBytes; the reason it stopped short, else empty.
std::string copy(int from, int to) {
  std::vector<char> buf(1 << 16);
  std::uint64_t total = 0;
  for (;;) {
    const ssize_t n = ::read(from, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return std::strerror(errno);
    if (n == 0) return {};
    total += static_cast<std::uint64_t>(n);
    if (total > trace::kMaxStreamBytes) return "longer than 1 GiB, read from a pipe";
    if (const WriteOutcome w = write_all(to, std::string_view(buf.data(), static_cast<std::size_t>(n))); !w.ok())
      return std::string("cannot copy it to a temporary file: ") + std::strerror(w.error);
  }
}

}  // namespace

Result<TraceSource> TraceSource::open(const std::string& path) {
  TraceSource source(path);
  const int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return Failure{path + ": " + std::strerror(errno)};
  struct stat st {};
  if (::fstat(in, &st) == 0 && S_ISREG(st.st_mode)) {
    source.fd_ = in;
    source.length_ = static_cast<std::uint64_t>(st.st_size);
    return source;
  }
  source.fd_ = temporary_file();
  if (source.fd_ < 0) {
    const int error = errno;
    ::close(in);
    return Failure{path + ": cannot make a temporary file to read it twice: " + std::strerror(error) + " (TMPDIR)"};
  }
  source.whole_ = true;
  const std::string stopped = copy(in, source.fd_);
  ::close(in);
  if (!stopped.empty()) return Failure{path + ": " + stopped};
  return source;
}

TraceSource::~TraceSource() {
  if (fd_ >= 0) ::close(fd_);
}

TraceSource::TraceSource(TraceSource&& other) noexcept
    : path_(std::move(other.path_)), fd_(other.fd_), length_(other.length_), whole_(other.whole_) {
  other.fd_ = -1;
}

Result<void> TraceSource::parse(trace::Visitor& visitor) const {
  if (::lseek(fd_, 0, SEEK_SET) != 0) return Failure{path_ + ": cannot read it again: " + std::strerror(errno)};
  if (whole_)
    trace::parse_fd(fd_, path_, visitor);
  else if (length_ > 0)  // an empty file gives nothing on either pass, whatever it holds by then
    trace::parse_fd(fd_, path_, visitor, trace::kMaxLineBytes, 0, length_);
  return {};
}

}  // namespace qprof::exports
