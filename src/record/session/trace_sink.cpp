// SPDX-License-Identifier: Apache-2.0
#include "trace_sink.hpp"

#include <unistd.h>

#include <cstring>

namespace qprof::record::session {

TraceSink::TraceSink(const TraceOutput& output, std::function<void()> on_failed, Speaker speaker)
    : writer_(std::make_unique<trace::Writer>(output.fd, output.path)),
      path_(output.path),
      readable_back_(output.readable_back),
      fd_(output.fd),
      created_(output.created),
      to_empty_(output.to_empty),
      on_failed_(std::move(on_failed)),
      speaker_(std::move(speaker)) {}

void TraceSink::begin() {
  if (!to_empty_) return;
  to_empty_ = false;
  if (::ftruncate(fd_, 0) == 0) return;
  error_ = "cannot empty " + path_ + ": " + std::strerror(errno);
  speaker_.line(error_ + ": the command goes on, sampled into memory only");
  if (on_failed_) on_failed_();
}

void TraceSink::failed(const char* consequence) {
  error_ = writer_->error();
  speaker_.line(error_ + consequence);
  if (on_failed_) on_failed_();
}

void TraceSink::flush() {
  if (writer_->flush() || !intact()) return;
  failed(": the trace is incomplete from here on; the command goes on, sampled into memory only");
}

void TraceSink::flush_at(std::int64_t now) {
  flush();
  last_flush_ns_ = now;
}

void TraceSink::flush_if_due(std::int64_t now, std::int64_t wake_at) {
  if (now - last_flush_ns_ >= kFlushEveryNs || wake_at - now >= kFlushEveryNs) flush_at(now);
}

void TraceSink::close() {
  flush();
  if (intact() && !writer_->close()) failed(": the trace may be incomplete");
}

void TraceSink::discard() {
  writer_.reset();
  if (readable_back_ && created_) ::unlink(path_.c_str());
}

}  // namespace qprof::record::session
