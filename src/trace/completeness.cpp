// SPDX-License-Identifier: Apache-2.0
#include "qprof/trace/completeness.hpp"

#include "qprof/common/safe_text.hpp"
#include "qprof/common/units.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::trace {
namespace {

class CompletenessReader : public trace::Visitor {
 public:
  void header(const TraceMeta& m) override { watch.header(m); }
  void exit(const ExitInfo&) override { watch.exit(); }
  void mem(const MemSample& s) override { watch.mem(s.t, line()); }
  void cmdline(std::string_view) override { watch.cmdline_at(line()); }
  void warning(const std::string&) override { watch.cut_at(line()); }
  CompletenessWatch watch;
};

}  // namespace

std::string Completeness::reason() const {
  std::string why;
  if (ends_early()) why = kNoEndRecord;
  if (cut_line > 0) {
    why += (why.empty() ? "" : "; ") + std::string("its last line (") + std::to_string(cut_line) +
           ") is cut and was ignored";
  }
  return why;
}

Completeness completeness_of(const Trace& trace) {
  return Completeness{.qprof = trace.is_qprof(),
                      .exit = trace.exit.has_value(),
                      .cut_line = trace.last_line_cut,
                      .second_run = trace.second_run_line,
                      .clock = trace.clock};
}

std::string incomplete_reason(const Trace& trace) { return completeness_of(trace).reason(); }

std::string Completeness::where(const std::string& file) const {
  return cut_line > 0 ? file + ":" + std::to_string(cut_line) : file;
}

Completeness file_completeness(const std::string& path) {
  CompletenessReader r;
  trace::parse_file(path, r);
  return r.watch.seen();
}

std::string incomplete_notice(const std::string& file, const Completeness& seen) {
  const std::string why = seen.reason();
  if (why.empty()) return "";
  return terminal_text(seen.where(file)) + ": incomplete trace: " + terminal_text(why);
}

std::string appended_runs_notice(const std::string& file, std::size_t second_run) {
  if (second_run == 0) return "";
  return terminal_text(file) + ":" + std::to_string(second_run) +
         ": a second run starts here (a second CMDLINE): `mprof run -o` appends to its file; the runs are read as "
         "one trace, under the last command. Record each run to a file of its own";
}

std::string clock_back_notice(const std::string& file, std::size_t line, Seconds by) {
  if (line == 0) return "";
  return terminal_text(file) + ":" + std::to_string(line) + ": the clock went back " + human_seconds(by) +
         " here (mprof stamps samples with the wall clock, which a clock step can set back): the samples are read as "
         "written, so a chart draws back over itself and a time before the start reads negative";
}

std::string late_start_notice(const std::string& file, std::size_t line, Seconds by) {
  if (line == 0) return "";
  return terminal_text(file) + ":" + std::to_string(line) + ": the first sample comes " + human_seconds(by) +
         " after the header's start (an edited or joined file, or a recorder held up that long): every time counts "
         "from that start, so the run "
         "seems to begin that late and a chart spans the gap";
}

std::vector<std::string> reading_notices(const std::string& file, const Completeness& seen) {
  std::vector<std::string> out;
  for (std::string n : {incomplete_notice(file, seen), appended_runs_notice(file, seen.second_run),
                        clock_back_notice(file, seen.clock.back_line, seen.clock.back_by),
                        late_start_notice(file, seen.clock.late_line, seen.clock.late_by)}) {
    if (!n.empty()) out.push_back(std::move(n));
  }
  return out;
}

}  // namespace qprof::trace
