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

// A row of the table: its cells, then how it ended, which continues under itself right of the
// cells where the terminal leaves it room there, else under the row's start.
std::string with_detail(const std::string& cells, const std::string& detail, std::size_t width) {
  return wrap_line(cells + detail, width, width >= cells.size() + 16 ? cells.size() : 6);
}

std::string row(const Probe& p, double baseline_s, std::size_t width) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "  %-10s %-10s %7s %8s %6s %10s  ", p.limit ? mib(p.limit).c_str() : "none",
                outcome_name(p.outcome), fixed(p.seconds, "%.2f s").c_str(),
                baseline_s > 0 ? fixed(p.seconds / baseline_s, "%.2fx").c_str() : "",
                p.major_faults ? std::to_string(*p.major_faults).c_str() : "?",
                p.read_bytes ? mib(*p.read_bytes).c_str() : "?");
  return with_detail(buf, terminal_text(p.detail), width);
}

// fit --gpu: the device figure and torch's where host fit has faults and reads. The limit takes
// 11 columns: a GPU's memory runs to 5 digits of MiB.
std::string gpu_cells(const std::string& limit, const std::string& outcome, const std::string& time,
                      const std::string& slowdown, const std::string& peak) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "  %-11s %-10s %7s %8s %11s", limit.c_str(), outcome.c_str(), time.c_str(),
                slowdown.c_str(), peak.c_str());
  return buf;
}

std::string torch_cells(const std::string& allocated, const std::string& reserved) {
  char buf[64];
  std::snprintf(buf, sizeof buf, " %11s %11s", allocated.c_str(), reserved.c_str());
  return buf;
}

std::string gpu_row(const Probe& p, double baseline_s, bool torch, std::size_t width) {
  std::string cells = gpu_cells(p.limit ? mib(p.limit) : "none", outcome_name(p.outcome), fixed(p.seconds, "%.2f s"),
                                baseline_s > 0 ? fixed(p.seconds / baseline_s, "%.2fx") : "", opt_mib(p.gpu_peak));
  if (torch) cells += torch_cells(opt_mib(p.torch_allocated), opt_mib(p.torch_reserved));
  return with_detail(cells + "  ", terminal_text(p.detail), width);
}

bool any_torch(const FitReport& r) {
  if (r.baseline && r.baseline->run.torch_reserved) return true;
  return std::any_of(r.probes.begin(), r.probes.end(), [](const Probe& p) { return p.torch_reserved.has_value(); });
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

std::string cutoff_words(const FitReport& r) {
  return "a run is stopped as too slow at " + human_seconds(r.cutoff_s) + " (" + fixed(r.max_slowdown, "%g") +
         "x the unlimited run)";
}

// The lines above the table, and the table's header with the unlimited run's row.
std::string host_head(const FitReport& r, std::vector<std::string>& notes, std::size_t width) {
  const Baseline& b = *r.baseline;
  std::vector<std::string> header;
  header.push_back("  unlimited: " + fixed(b.run.seconds, "%.2f s") + ", peak charge (footprint) " +
                   mib(b.charge_peak) + ", unreclaimable peak (anon + shmem) " + mib(b.unreclaimable_peak));
  input_lines(r, header, notes);
  header.push_back("  cgroup " + r.cgroup + ", swap " + (r.swap_limited ? "limited to 0" : "NOT limited") + "; " +
                   cutoff_words(r));
  std::string text;
  for (const std::string& h : header) text += wrap_text(h, width);
  text += with_detail("  limit      outcome       time slowdown majflt       read  ", "how it ended", width);
  return text + row(b.run, b.run.seconds, width);
}

std::string gpu_head(const FitReport& r, bool torch, std::size_t width) {
  const Baseline& b = *r.baseline;
  const GpuFit& g = *r.gpu;
  std::string text =
      wrap_text("  GPU " + std::to_string(g.index) + ": " + terminal_text(g.name) + " " + terminal_text(g.uuid) +
                    (g.total ? ", " + mib(g.total) : "") + " (GPU sampler: " + g.backend + ")",
                width);
  text += wrap_text("  unlimited: " + fixed(b.run.seconds, "%.2f s") + ", the tree's peak on the device " +
                        mib(b.charge_peak) + ", its smallest reading there (a context) " + mib(g.floor),
                    width);
  text += wrap_text("  " + terminal_text(g.method) + "; " + cutoff_words(r), width);
  std::string cells = gpu_cells("limit", "outcome", "time", "slowdown", "device peak");
  if (torch) cells += torch_cells("torch alloc", "torch resvd");
  text += with_detail(cells + "  ", "how it ended", width);
  return text + gpu_row(b.run, b.run.seconds, torch, width);
}

// What to ask a scheduler for: the tree's device peak in the run at the full-speed limit.
std::string gpu_request(const FitReport& r) {
  if (!r.findings.full_speed) return "";
  const Finding& f = *r.findings.full_speed;
  const std::optional<Bytes> held = f.probe ? r.probes[*f.probe].gpu_peak : r.baseline->run.gpu_peak;
  if (!held) return "";
  return "qprof fit: device memory to ask for: " + mib(*held) + " on GPU " + std::to_string(r.gpu->index) +
         " (the tree's peak there at the full-speed limit " + mib(f.limit) + " per process)";
}

// The requests to paste (host memory only: a GPU fit's limits are device memory).
std::vector<std::string> request_lines(const FitReport& r) {
  if (r.gpu) {
    const std::string line = gpu_request(r);
    return line.empty() ? std::vector<std::string>{} : std::vector<std::string>{line};
  }
  std::vector<std::string> out;
  const FitRequests requests = fit_requests(r);
  const auto request = [&out](const char* which, const std::optional<MemoryRequest>& q) {
    if (!q) return;
    out.push_back("qprof fit: request " + std::string(which) + ": " + slurm_request(*q) + ", " +
                  kubernetes_request(*q) + ", " + docker_request(*q) + ", " + systemd_request(*q) + " (" +
                  request_rule(*q) + ")");
  };
  request("for full speed", requests.full_speed);
  request("at the smallest limit", requests.smallest);
  return out;
}

}  // namespace

FitRequests fit_requests(const FitReport& r) {
  FitRequests out;
  if (r.findings.full_speed) {
    out.full_speed = memory_request(r.findings.full_speed->limit, "full-speed limit", r.request_margin);
  }
  if (r.findings.runs) out.smallest = memory_request(r.findings.runs->limit, "smallest limit", r.request_margin);
  return out;
}

std::vector<NamedFinding> named_findings(const FitReport& r) {
  return {
      {"smallest_running", "smallest limit not OOM-killed", &r.findings.runs},
      {"smallest_within_slowdown", "smallest limit it completes in within the slowdown", &r.findings.within_slowdown},
      {"full_speed", "full speed", &r.findings.full_speed}};
}

std::string text_report(const FitReport& r, std::size_t width) {
  std::string text = wrap_text("qprof fit: " + terminal_text(r.command), width);
  if (!r.baseline) return text;
  const Baseline& b = *r.baseline;
  std::vector<std::string> notes;
  const bool torch = r.gpu && any_torch(r);
  text += r.gpu ? gpu_head(r, torch, width) : host_head(r, notes, width);
  std::vector<const Probe*> sorted;
  for (const Probe& p : r.probes) sorted.push_back(&p);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Probe* a, const Probe* c) { return a->limit > c->limit; });
  for (const Probe* p : sorted)
    text += r.gpu ? gpu_row(*p, b.run.seconds, torch, width) : row(*p, b.run.seconds, width);
  for (const std::string& line : finding_lines(r))
    text += wrap_line(line, width, line.starts_with("qprof fit:   ") ? 6 : 4);
  for (const std::string& line : request_lines(r)) text += wrap_line(line, width, 4);
  for (const std::string& n : r.notes) notes.push_back(terminal_text(n));
  if (r.gpu) notes.push_back(terminal_text(r.gpu->dmem));
  for (const std::string& n : notes) text += wrap_line("qprof fit: note: " + n, width, 4);
  return text;
}

}  // namespace qprof::fit
