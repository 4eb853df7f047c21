// SPDX-License-Identifier: Apache-2.0
#include "qprof/trace/completeness.hpp"

#include "qprof/common/safe_text.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::trace {
namespace {

class CompletenessReader : public trace::Visitor {
 public:
  void header(const TraceMeta& m) override { seen.qprof = m.format_version > 0; }
  void exit(const ExitInfo&) override { seen.exit = true; }
  void mem(const MemSample&) override { seen.samples = true; }
  void warning(const std::string&) override { seen.cut_line = line(); }  // the reader's one warning
  Completeness seen;
};

}  // namespace

std::string Completeness::reason() const {
  std::string why;
  if (qprof && !exit) why = kNoEndRecord;
  if (cut_line > 0) {
    why += (why.empty() ? "" : "; ") + std::string("its last line (") + std::to_string(cut_line) +
           ") is cut and was ignored";
  }
  return why;
}

std::string incomplete_reason(const Trace& trace) {
  return Completeness{trace.is_qprof(), trace.exit.has_value(), trace.last_line_cut}.reason();
}

std::string Completeness::where(const std::string& file) const {
  return cut_line > 0 ? file + ":" + std::to_string(cut_line) : file;
}

Completeness file_completeness(const std::string& path) {
  CompletenessReader r;
  trace::parse_file(path, r);
  return r.seen;
}

std::string incomplete_notice(const std::string& file, const Completeness& seen) {
  const std::string why = seen.reason();
  if (why.empty()) return "";
  return terminal_text(seen.where(file)) + ": incomplete trace: " + terminal_text(why);
}

}  // namespace qprof::trace
