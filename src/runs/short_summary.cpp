// SPDX-License-Identifier: Apache-2.0
// The default summary of `qprof run`: the answer and what a user acts on, in a few lines. -v
// gives format_summary's whole block; `qprof report TRACE` the rest.
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "qprof/common/charset.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/common/text_wrap.hpp"
#include "qprof/common/units.hpp"
#include "qprof/runs/run_summary.hpp"
#include "qprof/trace/oom.hpp"
#include "summary_lines.hpp"

namespace qprof::runs {
using record::RunReport;
namespace {

std::string ended(const RunReport& r) {
  std::string text = human_seconds(r.duration);
  if (r.attached) return text + ", " + attached_end_words(r);
  if (r.exit.timed_out) return text + ", stopped by --timeout";
  if (r.exit.signal != 0) return text + ", killed by signal " + std::to_string(r.exit.signal);
  return text + ", exit status " + std::to_string(r.exit.status);
}

// What the user should act on, in plain words; empty when all is well. What was warned about
// during the run has been said already.
std::vector<std::string> warnings(const RunReport& r) {
  std::vector<std::string> w;
  if (r.sampling.unread_members > 0) {
    w.push_back(std::to_string(r.sampling.unread_members) + " processes could not be read: every figure misses them");
  }
  if (!r.trace_error.empty()) w.push_back("the trace is incomplete (" + terminal_text(r.trace_error) + ")");
  if (r.limit.warned && r.limit.bytes) {
    w.push_back("memory came within 10 % of the " + r.limit.source + " limit of " + human_bytes(*r.limit.bytes));
  }
  // A few late samples are normal on a busy machine; a tenth of them late coarsens the series.
  if (r.sampling.samples >= 20 && r.sampling.missed_deadlines * 10 > r.sampling.samples) {
    w.push_back(std::to_string(r.sampling.missed_deadlines) + " of " + std::to_string(r.sampling.samples) +
                " samples came late (a loaded machine, or a large tree)");
  }
  if (const auto check = footprint_below_largest_process(r)) w.push_back(*check);
  if (r.sampling.stops > 0)
    w.push_back("stopped for " + human_seconds(r.sampling.stopped_seconds) + " by Ctrl-Z: no samples then");
  return w;
}

}  // namespace

std::string format_short_summary(const RunReport& r, std::size_t columns) {
  SummaryLines out(columns);
  out.command(r.command);
  // An OOM kill first, whole: which process, when, in which stage, under which limit, holding
  // what; it explains every figure below.
  for (const trace::OomKill& k : r.oom_events)
    out.line("OOM kill", terminal_text(trace::describe_oom_kill(k, r.start)));
  if (r.footprint) {
    const trace::Footprint& f = *r.footprint;
    std::string text = human_bytes(f.peak) + " peak (" +
                       (f.basis == trace::Footprint::Basis::cgroup ? "cgroup charge" : "Σ PSS") + ")";
    if (f.unreclaimable) text += "; " + human_bytes(*f.unreclaimable) + " unreclaimable";
    out.line("footprint", text);
  }
  if (r.gpu.peak && r.gpu.peak->bytes > 0) out.line("GPU peak", human_bytes(r.gpu.peak->bytes));
  out.line("duration", ended(r));
  if (r.sampled_peak) {
    out.line("Σ RSS", human_bytes(r.sampled_peak->bytes) +
                          " peak, as mprof counts it: a page shared by N processes counts N times");
  }
  if (const auto request = request_text(r)) out.line("request", *request);
  if (const auto w = warnings(r); !w.empty()) {
    std::string text;
    for (const std::string& s : w) text += (text.empty() ? "" : "; ") + s;
    out.line("warning", text);
  }
  out.line("trace", (r.trace_path == "-" ? std::string("stdout") : terminal_text(r.trace_path)) +
                        " (-v: every figure; qprof report: the rest)");
  return out.text();
}

std::string summary_line(std::string_view what, std::string_view text, std::size_t columns) {
  SummaryLines out(columns);
  out.line(what, text);
  return out.text();
}

void say_summary(const record::RunOptions& options, const RunReport& report, const Speaker& speaker) {
  if (options.quiet || !report.launched) return;
  // As wide as the terminal it is read in (80 into a pipe or a log).
  const std::size_t columns = output_columns(STDERR_FILENO);
  speaker.text(options.verbose ? format_summary(report, columns) : format_short_summary(report, columns));
}

}  // namespace qprof::runs
