// SPDX-License-Identifier: Apache-2.0
#include "notices.hpp"

#include <unistd.h>

#include <cerrno>

#include "qprof/common/charset.hpp"

namespace qprof::record::session {

void Notices::say(const std::string& text) {
  // Said in the locale's charset (Σ as "sum" where it is not UTF-8).
  if (live_) {
    live_->message("qprof: " + locale_text(text));  // above the live line, never through it
  } else {
    // One write, between the job's: never inside one of its lines' writes.
    const std::string line = "qprof: " + locale_text(text) + '\n';
    std::lock_guard<std::mutex> lock(plain_.mu_);
    for (std::size_t done = 0; done < line.size();) {
      const ssize_t w = ::write(STDERR_FILENO, line.data() + done, line.size() - done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) break;  // stderr gone: the trace's NOTE still has it
      done += static_cast<std::size_t>(w);
    }
  }
}

void Notices::warn(const std::string& text) {
  // -q says nothing: the trace's NOTE and the report still have it.
  if (!quiet_) say(text);
  warnings_.push_back(text);
  if (trace_) trace_->note(text);
}

void Notices::note_quietly(std::string text) {
  if (trace_) {
    trace_->note(text);
    return;
  }
  quiet_notes_.push_back(std::move(text));
}

void Notices::write_to(trace::Writer& trace) {
  for (const std::string& w : warnings_) trace.note(w);
  for (const std::string& n : quiet_notes_) trace.note(n);
  trace_ = &trace;
}

}  // namespace qprof::record::session
