// SPDX-License-Identifier: Apache-2.0
// Streams a .dat file line by line into a Visitor. Lines are parsed in place from a large read
// buffer with std::from_chars: a 10-million-sample trace must parse in about a second.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <utility>

#include "line_feeder.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::trace {

using detail::LineFeeder;

ParseError::ParseError(std::string file, std::size_t line, const std::string& reason)
    : std::runtime_error(file + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + reason),
      file_(std::move(file)),
      line_(line) {}

void parse_text(std::string_view text, const std::string& name, Visitor& visitor) {
  LineFeeder feeder(name, visitor);
  const std::size_t used = feeder.feed(text);
  feeder.finish(text.substr(used));
}

void parse_file(const std::string& path, Visitor& visitor) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw ParseError(path, 0, std::strerror(errno));
  try {
    // A regular file's size bounds what its Trace holds; a pipe or a device that sends valid
    // lines for ever would not be (`yes MEM… | qprof report /dev/stdin`): they stop at 1 GiB.
    struct stat st {};
    const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    parse_fd(fd, path, visitor, kMaxLineBytes, regular ? 0 : kMaxStreamBytes);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

void parse_file_prefix(const std::string& path, std::uint64_t length, Visitor& visitor) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw ParseError(path, 0, std::strerror(errno));
  try {
    if (length > 0) parse_fd(fd, path, visitor, kMaxLineBytes, 0, length);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

void parse_fd(int fd, const std::string& name, Visitor& visitor, std::size_t max_line, std::uint64_t max_total,
              std::uint64_t length) {
  // One line of the longest kind and its newline: never grown (see kMaxLineBytes).
  std::string buf(max_line + 1, '\0');
  std::size_t have = 0;
  std::uint64_t total = 0;
  LineFeeder feeder(name, visitor, max_line);
  while (true) {
    std::size_t room = buf.size() - have;
    if (length > 0) room = static_cast<std::size_t>(std::min<std::uint64_t>(room, length - total));
    if (room == 0 && length > 0 && total == length) break;
    const ssize_t n = ::read(fd, buf.data() + have, room);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw ParseError(name, 0, std::strerror(errno));
    if (n == 0) break;
    total += static_cast<std::uint64_t>(n);
    if (max_total > 0 && total > max_total) {
      throw ParseError(name, 0,
                       "more than " + std::to_string(max_total >> 20) +
                           " MiB from a pipe or device: save the trace to a file and read that");
    }
    have += static_cast<std::size_t>(n);
    const std::size_t used = feeder.feed(std::string_view(buf.data(), have));
    std::memmove(buf.data(), buf.data() + used, have - used);
    have -= used;
  }
  feeder.finish(std::string_view(buf.data(), have));
}

}  // namespace qprof::trace
