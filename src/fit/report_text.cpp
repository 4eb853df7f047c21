// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <sstream>
#include <vector>

#include "qprof/common/safe_text.hpp"
#include "qprof/common/units.hpp"
#include "qprof/fit/report.hpp"
#include "qprof/fit/text_width.hpp"
#include "report_table.hpp"
#include "report_words.hpp"

namespace qprof::fit {
namespace {

// A size in the table: MiB, the unit in the column's header.
std::string mib_cell(const std::optional<Bytes>& b) {
  return b ? fixed(static_cast<double>(*b) / (1024.0 * 1024.0), "%.1f") : "?";
}

// The table of runs, the unlimited one first, then from the highest limit down. fit --gpu has the
// device figure and torch's where host fit has faults and reads.
std::string table_text(const FitReport& r, bool torch, std::size_t width) {
  std::vector<const Probe*> runs{&r.baseline->run};
  for (const Probe& p : r.probes) runs.push_back(&p);
  std::stable_sort(runs.begin() + 1, runs.end(), [](const Probe* a, const Probe* c) { return a->limit > c->limit; });
  const double baseline_s = r.baseline->run.seconds;
  std::vector<TableColumn> columns{
      {"limit MiB", false, 0, {}}, {"outcome", false, 0, {}}, {"time s", true, 0, {}}, {"slowdown", true, 0, {}}};
  if (r.gpu) {
    columns.push_back({"device MiB", true, 3, {}});
    if (torch) {
      columns.push_back({"alloc MiB", true, 2, {}});  // torch's allocated and reserved memory
      columns.push_back({"resvd MiB", true, 1, {}});
    }
  } else {
    columns.push_back({"majflt", true, 1, {}});
    columns.push_back({"read MiB", true, 2, {}});
  }
  columns.push_back({"how it ended", false, 0, {}});
  for (const Probe* p : runs) {
    std::vector<std::string> cells{p->limit ? mib_cell(p->limit) : "none", outcome_name(p->outcome),
                                   fixed(p->seconds, "%.2f"),
                                   baseline_s > 0 ? fixed(p->seconds / baseline_s, "%.2fx") : ""};
    if (r.gpu) {
      cells.push_back(mib_cell(p->gpu_peak));
      if (torch) {
        cells.push_back(mib_cell(p->torch_allocated));
        cells.push_back(mib_cell(p->torch_reserved));
      }
    } else {
      cells.push_back(p->major_faults ? std::to_string(*p->major_faults) : "?");
      cells.push_back(mib_cell(p->read_bytes));
    }
    cells.push_back(terminal_text(p->detail));
    for (std::size_t i = 0; i < columns.size(); ++i) columns[i].cells.push_back(std::move(cells[i]));
  }
  return fitted_table(std::move(columns), width);
}

bool any_torch(const FitReport& r) {
  if (r.baseline && r.baseline->run.torch_reserved) return true;
  return std::any_of(r.probes.begin(), r.probes.end(), [](const Probe& p) { return p.torch_reserved.has_value(); });
}

// What the job read, and how much of it another group's page cache held (fit/input_files.hpp).
void input_lines(const FitReport& r, std::vector<std::string>& header, std::vector<std::string>& notes) {
  if (!r.input) return;
  const InputReport& in = *r.input;
  if (in.files == 0) {
    // Without --cold no file is no news; with it, the user asked for an eviction that did nothing.
    if (in.cold) {
      header.push_back(
          "  input: no file was seen open or mapped during the unlimited run, so --cold evicted nothing (files "
          "opened and closed between two 10 ms samples are not seen): drop the whole cache as root (echo 1 > "
          "/proc/sys/vm/drop_caches) before qprof fit for a cold start");
    }
    return;
  }
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
  return text;
}

std::string gpu_head(const FitReport& r, std::size_t width) {
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
  return text;
}

// What to ask a scheduler for: the tree's device peak in the run at the full-speed limit.
std::string gpu_request(const FitReport& r) {
  if (!r.findings.full_speed) return "";
  const Finding& f = *r.findings.full_speed;
  const std::optional<Bytes> held = f.probe ? r.probes[*f.probe].gpu_peak : r.baseline->run.gpu_peak;
  if (!held) return "";
  const std::string where = r.probes.empty() ? "in the unlimited run: no limit was measured"
                                             : "at the full-speed limit " + mib(f.limit) + " per process";
  return "qprof fit: device memory to ask for: " + mib(*held) + " on GPU " + std::to_string(r.gpu->index) +
         " (the tree's peak there " + where + ")";
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
    out.push_back("qprof fit: request" + std::string(which) + ": " + slurm_request(*q) + ", " + kubernetes_request(*q) +
                  ", " + docker_request(*q) + ", " + systemd_request(*q) + " (" + request_rule(*q) + ")");
  };
  // Without a limited run both requests are the unlimited run's peak charge: one line says so.
  if (r.probes.empty()) {
    request("", requests.full_speed);
    return out;
  }
  request(" for full speed", requests.full_speed);
  request(" at the smallest limit", requests.smallest);
  return out;
}

}  // namespace

FitRequests fit_requests(const FitReport& r) {
  FitRequests out;
  // No limited run: the findings are the unlimited run's peak charge, which the rule names as such.
  const bool measured = !r.probes.empty();
  const std::string unmeasured = "no limit measured: the unlimited run's peak charge";
  if (r.findings.full_speed) {
    out.full_speed =
        memory_request(r.findings.full_speed->limit, measured ? "full-speed limit" : unmeasured, r.request_margin);
  }
  if (r.findings.runs) {
    out.smallest = memory_request(r.findings.runs->limit, measured ? "smallest limit" : unmeasured, r.request_margin);
  }
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
  std::vector<std::string> notes;
  const bool torch = r.gpu && any_torch(r);
  text += r.gpu ? gpu_head(r, width) : host_head(r, notes, width);
  text += table_text(r, torch, width);
  for (const std::string& line : finding_lines(r))
    text += wrap_line(line, width, line.starts_with("qprof fit:   ") ? 6 : 4);
  for (const std::string& line : request_lines(r)) text += wrap_line(line, width, 4);
  for (const std::string& n : r.notes) notes.push_back(terminal_text(n));
  if (r.gpu) notes.push_back(terminal_text(r.gpu->dmem));
  for (const std::string& n : notes) text += wrap_line("qprof fit: note: " + n, width, 4);
  return text;
}

}  // namespace qprof::fit
