#include "notices.hpp"

#include <iostream>

namespace qprof::session_detail {

void Notices::warn(const std::string& text) {
  if (quiet_) {
    // kept below: the trace's NOTE and the report still have it
  } else if (live_) live_->message("qprof: " + text);  // above the live line, never through it
  else std::cerr << "qprof: " << text << '\n';
  warnings_.push_back(text);
  if (trace_) trace_->note(text);
}

void Notices::write_to(dat::Writer& trace) {
  for (const std::string& w : warnings_) trace.note(w);
  for (const std::string& n : quiet_notes_) trace.note(n);
  trace_ = &trace;
}

}  // namespace qprof::session_detail
