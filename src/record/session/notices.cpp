// SPDX-License-Identifier: Apache-2.0
#include "notices.hpp"

#include "qprof/common/charset.hpp"

namespace qprof::record::session {

void Notices::say(const std::string& text) {
  // Between the writes of the job's stderr copy, never inside one; with a live line, also between
  // its frames, on the rows above it (its scrolling region).
  TeeOutputGuard& terminal = live_ ? static_cast<TeeOutputGuard&>(*live_) : plain_;
  const TeeOutputGuard::Held held(terminal);  // released however the sink returns
  speaker_.line(locale_text(text));           // in the locale's charset (Σ as "sum" where it is not UTF-8)
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
