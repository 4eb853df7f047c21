// SPDX-License-Identifier: Apache-2.0
#include "qprof/trace/piece_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "line_feeder.hpp"
#include "qprof/common/proc_file.hpp"

namespace qprof::trace {

PieceReader::PieceReader(std::string path, std::uint64_t length, Visitor& visitor, std::size_t piece)
    : path_(std::move(path)),
      length_(length),
      // At least a few bytes: the file's first (a byte-order mark, a compressed file's magic) are
      // judged in the first piece.
      piece_(std::clamp(piece, kMinPieceBytes, kMaxLineBytes + 1)),
      buf_(piece_, '\0'),
      feeder_(std::make_unique<detail::LineFeeder>(path_, visitor)) {}

PieceReader::~PieceReader() = default;

// The next bytes after those read, opened anew each time: a descriptor held per file between
// pieces would run out (1024 by default) before the ranks of a large job do.
std::size_t PieceReader::read_piece() {
  // A buffer full of one unended line: grown up to the longest line and its newline, where
  // parse_fd's is (longer: the feeder says so).
  if (have_ == buf_.size() && buf_.size() < kMaxLineBytes + 1) {
    buf_.resize(std::min(buf_.size() * 2, kMaxLineBytes + 1));
  }
  const std::size_t room = static_cast<std::size_t>(std::min<std::uint64_t>(buf_.size() - have_, length_ - offset_));
  if (room == 0) return 0;
  const ProcFile file(path_);  // closed on every way out
  if (!file.is_open()) throw ParseError(path_, 0, std::strerror(errno));
  struct stat st {};
  if (::fstat(file.fd(), &st) != 0) throw ParseError(path_, 0, std::strerror(errno));
  if (offset_ == 0) {
    dev_ = st.st_dev;
    ino_ = st.st_ino;
  } else if (st.st_dev != dev_ || st.st_ino != ino_) {
    throw ParseError(path_, 0, "the file was replaced while it was being read");
  } else if (st.st_size < static_cast<off_t>(offset_)) {
    // Cut, and maybe written anew: what follows would not continue the lines read.
    throw ParseError(path_, 0, "the file was cut while it was being read");
  }
  ssize_t n = 0;
  while ((n = ::pread(file.fd(), buf_.data() + have_, room, static_cast<off_t>(offset_))) < 0 && errno == EINTR) {
  }
  if (n < 0) throw ParseError(path_, 0, std::strerror(errno));
  return static_cast<std::size_t>(n);
}

bool PieceReader::next() {
  if (ended_) return false;
  const std::size_t n = read_piece();
  offset_ += n;
  have_ += n;
  const std::size_t used = feeder_->feed(std::string_view(buf_.data(), have_));
  std::memmove(buf_.data(), buf_.data() + used, have_ - used);
  have_ -= used;
  // After a long line the buffer goes back to one piece: a rank's huge CMDLINE is not held a MiB
  // for the rest of the walk.
  if (buf_.size() > piece_ && have_ <= piece_) {
    buf_.resize(piece_);
    buf_.shrink_to_fit();
  }
  // The end: the length read, or the file shorter than it (cut since), or a line too long for
  // the buffer at its largest.
  if (n == 0 || offset_ == length_) {
    feeder_->finish(std::string_view(buf_.data(), have_));
    ended_ = true;
  }
  return n > 0 || used > 0;
}

}  // namespace qprof::trace
