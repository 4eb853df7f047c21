// SPDX-License-Identifier: Apache-2.0
// A trace the CSV and JSON exports read twice (its columns, then its rows). A regular file is
// opened again for each pass; one that can be read only once (a pipe, a FIFO, /dev/stdin) is first
// copied into an unnamed temporary file ($TMPDIR, else /tmp), up to trace::kMaxStreamBytes as every
// reader of a pipe stops, and read there. Errors name the trace as given.
#pragma once

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

  // One pass over the whole trace. Throws trace::ParseError ("PATH:LINE: reason").
  void parse(trace::Visitor& visitor) const;
  const std::string& path() const { return path_; }

 private:
  explicit TraceSource(std::string path) : path_(std::move(path)) {}
  std::string path_;
  int copy_ = -1;  // the temporary copy of a trace that is not a regular file
};

}  // namespace qprof::exports
