// SPDX-License-Identifier: Apache-2.0
#include "trace_source.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace qprof::exports {
namespace {

int temporary_file() {
  const char* dir = std::getenv("TMPDIR");
  const std::string where = dir && *dir ? dir : "/tmp";
  return ::open(where.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
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
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::write(to, buf.data() + done, static_cast<std::size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return std::string("cannot copy it to a temporary file: ") + std::strerror(errno);
      done += w;
    }
  }
}

}  // namespace

Result<TraceSource> TraceSource::open(const std::string& path) {
  TraceSource source(path);
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode)) return source;
  const int in = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return Failure{path + ": " + std::strerror(errno)};
  source.copy_ = temporary_file();
  if (source.copy_ < 0) {
    const int error = errno;
    ::close(in);
    return Failure{path + ": cannot make a temporary file to read it twice: " + std::strerror(error) + " (TMPDIR)"};
  }
  const std::string stopped = copy(in, source.copy_);
  ::close(in);
  if (!stopped.empty()) return Failure{path + ": " + stopped};
  return source;
}

TraceSource::~TraceSource() {
  if (copy_ >= 0) ::close(copy_);
}

TraceSource::TraceSource(TraceSource&& other) noexcept : path_(std::move(other.path_)), copy_(other.copy_) {
  other.copy_ = -1;
}

void TraceSource::parse(trace::Visitor& visitor) const {
  if (copy_ < 0) {
    trace::parse_file(path_, visitor);
    return;
  }
  if (::lseek(copy_, 0, SEEK_SET) != 0) throw trace::ParseError(path_, 0, std::strerror(errno));
  trace::parse_fd(copy_, path_, visitor);
}

}  // namespace qprof::exports
