// SPDX-License-Identifier: Apache-2.0
// A trace file parsed a piece at a time, for a reader that interleaves many files on one thread (a
// job's sum over hundreds of ranks' traces): between two pieces it holds no descriptor and a
// buffer of one piece, grown only for a longer line, so that neither the threads, nor the open
// files, nor the memory of such a reader grow more than a few KiB with each file.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "qprof/trace/format.hpp"

namespace qprof::trace {

namespace detail {
class LineFeeder;
}

class PieceReader {
 public:
  // The first `length` bytes of the regular file at `path` (what an earlier pass read), as
  // parse_file_prefix reads them, into `visitor`.
  PieceReader(std::string path, std::uint64_t length, Visitor& visitor, std::size_t piece = kPieceBytes);
  ~PieceReader();
  PieceReader(const PieceReader&) = delete;
  PieceReader& operator=(const PieceReader&) = delete;

  // Parses the whole lines of the next piece into the visitor; false once every line was given.
  // Throws ParseError, as parse_file does, and where the file was replaced, or cut below what was
  // read, since the first piece; a file cut after that ends there, as parse_file_prefix's does.
  bool next();

  static constexpr std::size_t kPieceBytes = 16 << 10;  // about 600 samples
  static constexpr std::size_t kMinPieceBytes = 64;

 private:
  std::size_t read_piece();

  std::string path_;
  std::uint64_t length_;
  std::uint64_t offset_ = 0;
  std::size_t piece_;
  std::string buf_;
  std::size_t have_ = 0;
  std::unique_ptr<detail::LineFeeder> feeder_;
  bool ended_ = false;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
};

}  // namespace qprof::trace
