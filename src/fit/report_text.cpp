// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <sstream>
#include <vector>

#include "qprof/common/safe_text.hpp"
#include "qprof/common/units.hpp"
#include "qprof/fit/report.hpp"
#include "qprof/fit/text_width.hpp"
#include "report_words.hpp"

namespace qprof::fit {
namespace {

// The columns before "how it ended", which continues below itself when it does not fit.
constexpr std::size_t kDetailColumn = 60;

std::string row(const Probe& p, double baseline_s, std::size_t width) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "  %-10s %-10s %7s %8s %6s %10s  ", p.limit ? mib(p.limit).c_str() : "none",
                outcome_name(p.outcome), fixed(p.seconds, "%.2f s").c_str(),
                baseline_s > 0 ? fixed(p.seconds / baseline_s, "%.2fx").c_str() : "",
                p.major_faults ? std::to_string(*p.major_faults).c_str() : "?",
                p.read_bytes ? mib(*p.read_bytes).c_str() : "?");
  const std::string cells = buf;
  return wrap_line(cells + terminal_text(p.detail), width, width >= kDetailColumn + 16 ? kDetailColumn : 6);
}

// What the job read, and how much of it another group's page cache held (fit/input_files.hpp).
void input_lines(const FitReport& r, std::vector<std::string>& header, std::vector<std::string>& notes) {
  if (!r.input) return;
  const InputReport& in = *r.input;
  std::string line = "  input: " + std::to_string(in.files) + (in.files == 1 ? " file" : " files") +
                     " open or mapped, " + mib(in.size) +
                     "; cached outside the job's group after its run: " + mib(in.cached_outside);
  if (in.cold) {
    line += "; evicted before each run (--cold), what stayed cached: at most " + mib(in.left_after_eviction);
    if (in.not_evicted) line += " (" + std::to_string(in.not_evicted) + " file(s) could not be opened again)";
    if (in.baseline_again) line += "; the unlimited run was made again with it evicted";
  }
  header.push_back(line);
  const Bytes significant = r.resolution.at(r.baseline ? r.baseline->charge_peak : 0);
  if (!in.cold && in.cached_outside > significant) {
    notes.push_back(mib(in.cached_outside) +
                    " of the job's input was in page cache charged to another cgroup: the job " +
                    "read it without being charged for it, so every limit here leaves it out, and a cold start " +
                    "would need more; --cold evicts it before each run");
  }
}

}  // namespace

std::vector<NamedFinding> named_findings(const FitReport& r) {
  return {
      {"smallest_running", "smallest limit not OOM-killed", &r.findings.runs},
      {"smallest_within_slowdown", "smallest limit it completes in within the slowdown", &r.findings.within_slowdown},
      {"full_speed", "full speed", &r.findings.full_speed}};
}

std::string text_report(const FitReport& r, std::size_t width) {
  std::ostringstream out;
  out << "qprof fit: " << terminal_text(r.command) << '\n';
  if (!r.baseline) return wrap_text(out.str(), width);
  const Baseline& b = *r.baseline;
  std::vector<std::string> header, notes;
  header.push_back("  unlimited: " + fixed(b.run.seconds, "%.2f s") + ", peak charge (footprint) " +
                   mib(b.charge_peak) + ", unreclaimable peak (anon + shmem) " + mib(b.unreclaimable_peak));
  input_lines(r, header, notes);
  header.push_back("  cgroup " + r.cgroup + ", swap " + (r.swap_limited ? "limited to 0" : "NOT limited") +
                   "; a run is stopped as too slow at " + human_seconds(r.cutoff_s) + " (" +
                   fixed(r.max_slowdown, "%g") + "x the unlimited run)");
  for (const std::string& h : header) out << h << '\n';
  std::string text = wrap_text(out.str(), width);
  text += wrap_line("  limit      outcome       time slowdown majflt       read  how it ended", width, 4);
  text += row(b.run, b.run.seconds, width);
  std::vector<const Probe*> sorted;
  for (const Probe& p : r.probes) sorted.push_back(&p);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Probe* a, const Probe* c) { return a->limit > c->limit; });
  for (const Probe* p : sorted) text += row(*p, b.run.seconds, width);
  for (const std::string& line : finding_lines(r))
    text += wrap_line(line, width, line.starts_with("qprof fit:   ") ? 6 : 4);
  for (const std::string& n : r.notes) notes.push_back(terminal_text(n));
  for (const std::string& n : notes) text += wrap_line("qprof fit: note: " + n, width, 4);
  return text;
}

}  // namespace qprof::fit
