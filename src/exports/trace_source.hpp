// SPDX-License-Identifier: Apache-2.0
// A trace the CSV and JSON exports read twice (its columns, then its rows), opened once: both passes
// read the same bytes. A regular file is read up to the size it had when opened (a trace that is
// still being written grows between the passes, and a line kind the first pass never saw would have
// no column); one that can be read only once (a pipe, a FIFO, /dev/stdin) is first copied into an
// unnamed temporary file ($TMPDIR, else /tmp), up to trace::kMaxStreamBytes as every reader of a
// pipe stops, and read there. Errors name the trace as given.
#pragma once

#include <cstdint>
#include <string>

#include "qprof/common/failure.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::exports {

class TraceSource {
 public:
  // Fails ("PATH: reason") where it cannot be read or copied.
  static Result<TraceSource> open(const std::string& path);
  ~TraceSource();
  TraceSource(TraceSource&& other) noexcept;
  TraceSource(const TraceSource&) = delete;
  TraceSource& operator=(const TraceSource&) = delete;
  TraceSource& operator=(TraceSource&&) = delete;

  // One pass over the trace's bytes. Throws trace::ParseError ("PATH:LINE: reason") for a bad
  // line (the trace reader's); fails where the file cannot be read from its start again.
  Result<void> parse(trace::Visitor& visitor) const;
  const std::string& path() const { return path_; }

 private:
  explicit TraceSource(std::string path) : path_(std::move(path)) {}
  std::string path_;
  int fd_ = -1;               // the trace, or the temporary copy of one that is not a regular file
  std::uint64_t length_ = 0;  // bytes each pass reads (a regular file's size when opened)
  bool whole_ = false;        // a copy: read to its end
};

}  // namespace qprof::exports
