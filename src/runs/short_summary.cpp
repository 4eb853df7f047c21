// SPDX-License-Identifier: Apache-2.0
// The default summary of `qprof run`: the answer and what a user acts on, in a few lines. -v
// gives format_summary's whole block; `qprof report TRACE` the rest.
#include <algorithm>
#include <string>
#include <vector>

#include "qprof/common/charset.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/common/text_wrap.hpp"
#include "qprof/common/units.hpp"
#include "qprof/runs/run_summary.hpp"
#include "qprof/trace/oom.hpp"

namespace qprof::runs {
using record::RunReport;
namespace {

constexpr std::size_t kColumns = 80;
constexpr std::size_t kNameWidth = 15;
constexpr std::string_view kPrefix = "qprof:   ";

// "qprof:   name            text", the text wrapped under itself at 80 columns.
void line(std::string& out, std::string_view name, const std::string& text) {
  const std::string head = std::string(kPrefix) + std::string(name) +
                           std::string(kNameWidth - std::min(kNameWidth, text_columns(name)), ' ') + ' ';
  const std::size_t column = text_columns(head);
  const std::string body = wrap_text(text, kColumns, column, column);
  out += locale_text(head + body.substr(std::min(body.size(), column)));
}

std::string ended(const RunReport& r) {
  std::string text = human_seconds(r.duration);
  if (r.exit.timed_out) return text + ", stopped by --timeout";
  if (r.attached && !r.exit.status_known) return text + ", the process's status unknown (not qprof's child)";
  if (r.exit.signal != 0)
    return text + (r.attached ? ", the process was" : ",") + " killed by signal " + std::to_string(r.exit.signal);
  return text + (r.attached ? ", the process exited with status " : ", exit status ") + std::to_string(r.exit.status);
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

std::string format_short_summary(const RunReport& r) {
  std::string out = "qprof: " + terminal_text(r.command);
  if (text_columns(out) > kColumns) {  // cut between characters, never inside one
    std::size_t keep = 0;
    for (std::size_t columns = 0; keep < out.size() && columns < kColumns - 3; ++columns) {
      ++keep;
      while (keep < out.size() && (static_cast<unsigned char>(out[keep]) & 0xC0) == 0x80) ++keep;
    }
    out = out.substr(0, keep) + "...";
  }
  out = locale_text(out) + "\n";
  // An OOM kill first, whole: which process, when, in which stage, under which limit, holding
  // what; it explains every figure below.
  for (const trace::OomKill& k : r.oom_events)
    line(out, "OOM kill", terminal_text(trace::describe_oom_kill(k, r.start)));
  if (r.footprint) {
    const trace::Footprint& f = *r.footprint;
    std::string text = human_bytes(f.peak) + " peak (" +
                       (f.basis == trace::Footprint::Basis::cgroup ? "cgroup charge" : "Σ PSS") + ")";
    if (f.unreclaimable) text += "; " + human_bytes(*f.unreclaimable) + " unreclaimable";
    line(out, "footprint", text);
  }
  if (r.gpu.peak && r.gpu.peak->bytes > 0) line(out, "GPU peak", human_bytes(r.gpu.peak->bytes));
  line(out, "duration", ended(r));
  if (r.sampled_peak) {
    line(out, "Σ RSS",
         human_bytes(r.sampled_peak->bytes) + " peak, as mprof counts it: a page shared by N processes counts N times");
  }
  if (const auto request = request_text(r)) line(out, "request", *request);
  if (const auto w = warnings(r); !w.empty()) {
    std::string text;
    for (const std::string& s : w) text += (text.empty() ? "" : "; ") + s;
    line(out, "warning", text);
  }
  line(out, "trace",
       (r.trace_path == "-" ? std::string("stdout") : terminal_text(r.trace_path)) +
           " (-v: every figure; qprof report: the rest)");
  return out;
}

void say_summary(const record::RunOptions& options, const RunReport& report, const Speaker& speaker) {
  if (options.quiet || !report.launched) return;
  speaker.text(options.verbose ? format_summary(report) : format_short_summary(report));
}

}  // namespace qprof::runs
