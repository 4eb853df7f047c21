// SPDX-License-Identifier: Apache-2.0
#include "notices.hpp"

#include "qprof/common/charset.hpp"
#include "qprof/common/safe_text.hpp"

namespace qprof::record::session {

void Notices::say(const std::string& text) {
  // Between the writes of the job's stderr copy, never inside one; with a live line, also between
  // its frames, on the rows above it (its scrolling region).
  TeeOutputGuard& terminal = live_ ? static_cast<TeeOutputGuard&>(*live_) : plain_;
  const TeeOutputGuard::Held held(terminal);  // released however the sink returns
  // A warning may carry the job's text (a stage's name, a process's): escaped here, where it
  // reaches the terminal, so that the trace's NOTE keeps it as it was (its writer escapes it).
  // Then in the locale's charset (Σ as "sum" where it is not UTF-8).
  speaker_.line(locale_text(terminal_text(text)));
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
