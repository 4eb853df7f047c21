// SPDX-License-Identifier: Apache-2.0
// The trace's writer from the opened file to its close. The buffered lines go out at least every
// 100 ms, and before the run sleeps that long. The first failed write is said at once and told
// to the hook; the command then goes on, sampled into memory only, and nothing more is said.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "qprof/common/speaker.hpp"
#include "qprof/record/trace_output.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::record::session {

class TraceSink {
 public:
  static constexpr std::int64_t kFlushEveryNs = 100 * 1000000;  // the most a sample waits in the buffer

  // Takes `output`'s descriptor. `on_failed` (may be empty) is called once, at the first failure,
  // which is said through `speaker`.
  TraceSink(const TraceOutput& output, std::function<void()> on_failed, Speaker speaker = {});
  TraceSink(const TraceSink&) = delete;
  TraceSink& operator=(const TraceSink&) = delete;

  trace::Writer& writer() { return *writer_; }
  bool intact() const { return error_.empty(); }
  const std::string& error() const { return error_; }  // why the trace is incomplete

  // The command has started: an existing file's old content goes now, not before (to_empty).
  void begin();
  void flush();
  // The schedule starts: the flush cadence counts from `now`.
  void start_cadence(std::int64_t now) { last_flush_ns_ = now; }
  // A flush at `now` (a checkpoint's): the cadence counts from it.
  void flush_at(std::int64_t now);
  // The schedule's flush: when the last one is kFlushEveryNs old, or the run is about to sleep
  // until `wake_at`, that long or longer.
  void flush_if_due(std::int64_t now, std::int64_t wake_at);
  // The end of the trace: flushed and closed; a failure is said as a failed write is.
  void close();
  // The command never started: the file is closed, and removed when qprof created it; a file
  // that was there is left as it was (never emptied).
  void discard();

 private:
  void failed(const char* consequence);

  std::unique_ptr<trace::Writer> writer_;
  std::string path_;
  bool readable_back_;
  int fd_;
  bool created_;
  bool to_empty_;
  std::function<void()> on_failed_;
  Speaker speaker_;
  std::string error_;
  std::int64_t last_flush_ns_ = 0;
};

}  // namespace qprof::record::session
