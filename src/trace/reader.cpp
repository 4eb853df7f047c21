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

#include "qprof/trace/format.hpp"
#include "line_parser.hpp"
#include "plain_numbers.hpp"

namespace qprof::trace {
namespace {

using detail::LineError;
using detail::parse_line;

// Feeds complete lines to parse_line, tracking line numbers; handles the unterminated last line.
class LineFeeder {
 public:
  LineFeeder(const std::string& name, Visitor& v, std::size_t max_line = kMaxLineBytes)
      : name_(name), v_(v), max_line_(max_line) {}

  // Parses every complete line in `data`; returns how many bytes it consumed.
  std::size_t feed(std::string_view data) {
    std::size_t pos = 0;
    if (line_no_ == 0 && !started_) pos = start_of(data);
    while (true) {
      // Most records are MEM lines: parsed whole where the window fits, with no newline search.
      if (max_line_ >= detail::kMemRecordWindow) {
        try {
          pos += detail::fast_mem_records(data.data() + pos, data.size() - pos, v_, line_no_);
        } catch (const BadRecord& e) {  // the visitor refused the sample (qprof plot: an absurd time)
          throw ParseError(name_, line_no_ + 1, e.what());
        }
      }
      const void* nl = std::memchr(data.data() + pos, '\n', data.size() - pos);
      if (nl == nullptr) {
        if (data.size() - pos > max_line_) too_long();
        return pos;
      }
      const std::size_t end = static_cast<const char*>(nl) - data.data();
      one(data.substr(pos, end - pos), data.data() + data.size());
      pos = end + 1;
    }
  }

  void finish(std::string_view tail) {
    if (tail.empty()) return;
    if (tail.size() > max_line_) too_long();
    ++line_no_;
    v_.at_line(line_no_);
    v_.warning(name_ + ":" + std::to_string(line_no_) +
               ": the last line has no newline (was the writer killed?); it was ignored");
  }

 private:
  // The first bytes of the file: a UTF-8 byte-order mark (an editor's) is skipped; a compressed
  // file is named as such rather than quoted as binary.
  std::size_t start_of(std::string_view data) {
    started_ = true;
    if (data.starts_with("\xEF\xBB\xBF")) return 3;
    static constexpr std::pair<std::string_view, std::string_view> kCompressed[] = {
        {"\x1F\x8B", "gzip (gunzip it first)"},
        {"\x28\xB5\x2F\xFD", "zstd (unzstd it first)"},
        {"\xFD"
         "7zXZ",
         "xz (unxz it first)"},
        {"BZh", "bzip2 (bunzip2 it first)"}};
    for (const auto& [magic, what] : kCompressed) {
      if (data.starts_with(magic))
        throw ParseError(name_, 1, "a compressed file, " + std::string(what) + ", not a trace");
    }
    return 0;
  }

  [[noreturn]] void too_long() const {
    throw ParseError(name_, line_no_ + 1,
                     "line longer than " +
                         (max_line_ == kMaxLineBytes ? std::string("1 MiB") : std::to_string(max_line_) + " bytes"));
  }

  // `limit`: the end of the buffer the line is in (the MEM fast path reads ahead within it).
  void one(std::string_view line, const char* limit) {
    if (line.size() > max_line_) too_long();
    ++line_no_;
    v_.at_line(line_no_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) return;
    try {
      if (detail::fast_mem_line(line, limit, v_)) return;
      parse_line(line, v_);
    } catch (const LineError& e) {
      throw ParseError(name_, line_no_, e.reason);
    } catch (const BadRecord& e) {
      throw ParseError(name_, line_no_, e.what());
    }
  }

  const std::string& name_;
  Visitor& v_;
  std::size_t max_line_;
  std::size_t line_no_ = 0;
  bool started_ = false;
};

}  // namespace

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
