// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cstdio>
#include <vector>
#include <sstream>

#include "qprof/common/number_text.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/common/units.hpp"
#include "qprof/fit/report.hpp"

namespace qprof::fit {
namespace {

// Limits in MiB with a decimal: the resolution is a few MiB, and every row reads in one unit.
std::string mib(Bytes b) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(b) / (1024.0 * 1024.0));
  return buf;
}

// The argument order of this file's calls; the formatting is common's.
std::string fixed(double v, const char* format) { return printf_number(format, v); }

std::string opt_mib(const std::optional<Bytes>& b) { return b ? mib(*b) : "?"; }

// fit --gpu: the device figure and torch's where host fit has faults and reads.
std::string gpu_row(const Probe& p, double baseline_s, bool torch) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "  %-11s %-11s %9s %8s %12s", p.limit ? mib(p.limit).c_str() : "none",
                outcome_name(p.outcome), fixed(p.seconds, "%.2f s").c_str(),
                baseline_s > 0 ? fixed(p.seconds / baseline_s, "%.2fx").c_str() : "", opt_mib(p.gpu_peak).c_str());
  std::string out = buf;
  if (torch) {
    std::snprintf(buf, sizeof buf, " %12s %12s", opt_mib(p.torch_allocated).c_str(), opt_mib(p.torch_reserved).c_str());
    out += buf;
  }
  return out + "  " + terminal_text(p.detail) + "\n";
}

std::string row(const Probe& p, double baseline_s) {
  char buf[256];
  std::snprintf(buf, sizeof buf, "  %-11s %-11s %9s %8s %13s %11s  %s\n", p.limit ? mib(p.limit).c_str() : "none",
                outcome_name(p.outcome), fixed(p.seconds, "%.2f s").c_str(),
                baseline_s > 0 ? fixed(p.seconds / baseline_s, "%.2fx").c_str() : "",
                p.major_faults ? std::to_string(*p.major_faults).c_str() : "?",
                p.read_bytes ? mib(*p.read_bytes).c_str() : "?", p.detail.c_str());
  return buf;
}

// What a finding rests on: the probe that reached the level, and the limit that fell short.
std::string evidence(const FitReport& r, const Finding& f) {
  std::string out;
  if (f.probe) {
    const Probe& p = r.probes[*f.probe];
    out = p.outcome == Outcome::too_slow
              ? "still running when stopped at " + human_seconds(r.cutoff_s) + "; it may complete later"
              : "completed in " + fixed(p.seconds, "%.2f s");
  } else {
    out = r.gpu ? "the unlimited run's peak on the device" : "the unlimited run's peak charge";
  }
  const Probe* below = nullptr;
  for (const Probe& p : r.probes) {
    if (p.limit == f.short_of) below = &p;
  }
  if (below) {
    out += "; " + std::string(outcome_name(below->outcome)) + " at " + mib(below->limit);
    if (below->outcome == Outcome::completed) out += " in " + fixed(below->seconds, "%.2f s");
  } else if (r.baseline) {
    out += std::string("; nothing was tried at or below its ") +
           (r.gpu ? "smallest reading on the device (a context) " : "unreclaimable peak ") + mib(f.short_of);
  }
  if (r.gpu) {
    const std::optional<Bytes> held = f.probe ? r.probes[*f.probe].gpu_peak : r.baseline->run.gpu_peak;
    if (held) out += "; the tree held " + mib(*held) + " on the device";
  }
  return out;
}

bool any_torch(const FitReport& r) {
  if (r.baseline && r.baseline->run.torch_reserved) return true;
  return std::any_of(r.probes.begin(), r.probes.end(), [](const Probe& p) { return p.torch_reserved.has_value(); });
}

void gpu_header(std::ostringstream& out, const FitReport& r) {
  const Baseline& b = *r.baseline;
  const GpuFit& g = *r.gpu;
  out << "  GPU " << g.index << ": " << terminal_text(g.name) << " " << g.uuid << (g.total ? ", " + mib(g.total) : "")
      << " (GPU sampler: " << g.backend << ")\n";
  out << "  unlimited: " << fixed(b.run.seconds, "%.2f s") << ", the tree's peak on the device " << mib(b.charge_peak)
      << ", its smallest reading there (a context) " << mib(g.floor) << "\n";
  out << "  " << terminal_text(g.method) << "; a probe is stopped as too slow at " << human_seconds(r.cutoff_s) << " ("
      << fixed(r.max_slowdown, "%g") << "x the unlimited run)\n";
  const bool torch = any_torch(r);
  out << "  limit       outcome      duration slowdown  device peak" << (torch ? "  torch alloc torch reserv" : "")
      << "  how it ended\n";
  out << gpu_row(b.run, b.run.seconds, torch);
}

void host_header(std::ostringstream& out, const FitReport& r) {
  const Baseline& b = *r.baseline;
  out << "  unlimited: " << fixed(b.run.seconds, "%.2f s") << ", peak charge (footprint) " << mib(b.charge_peak)
      << ", unreclaimable peak (anon + shmem) " << mib(b.unreclaimable_peak) << "\n";
  out << "  cgroup " << r.cgroup << ", swap " << (r.swap_limited ? "limited to 0" : "NOT limited")
      << "; a probe is stopped as too slow at " << human_seconds(r.cutoff_s) << " (" << fixed(r.max_slowdown, "%g")
      << "x the unlimited run)\n";
  out << "  limit       outcome      duration slowdown  major faults        read  how it ended\n";
  out << row(b.run, b.run.seconds);
}

// What to ask a scheduler for: the tree's device peak in the run at the full-speed limit.
std::string gpu_request(const FitReport& r) {
  if (!r.findings.full_speed) return "";
  const Finding& f = *r.findings.full_speed;
  const std::optional<Bytes> held = f.probe ? r.probes[*f.probe].gpu_peak : r.baseline->run.gpu_peak;
  if (!held) return "";
  return "qprof fit: device memory to ask for: " + mib(*held) + " on GPU " + std::to_string(r.gpu->index) +
         " (the tree's peak there at the full-speed limit " + mib(f.limit) + " per process)\n";
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
  return {{"smallest_running", "smallest limit it runs in", &r.findings.runs},
          {"smallest_within_slowdown", "smallest within the slowdown", &r.findings.within_slowdown},
          {"full_speed", "full speed", &r.findings.full_speed}};
}

std::string text_report(const FitReport& r) {
  std::ostringstream out;
  out << "qprof fit: " << terminal_text(r.command) << '\n';
  if (!r.baseline) return out.str();
  const Baseline& b = *r.baseline;
  std::vector<const Probe*> sorted;
  for (const Probe& p : r.probes) sorted.push_back(&p);
  std::stable_sort(sorted.begin(), sorted.end(), [](const Probe* a, const Probe* c) { return a->limit > c->limit; });
  if (r.gpu) {
    gpu_header(out, r);
    for (const Probe* p : sorted) out << gpu_row(*p, b.run.seconds, any_torch(r));
  } else {
    host_header(out, r);
    for (const Probe* p : sorted) out << row(*p, b.run.seconds);
  }
  const std::string slowdown = "within " + fixed(r.max_slowdown, "%g") + "x";
  const std::string speed = "full speed (within " + fixed(r.full_speed_margin * 100, "%g") + " % of the fastest run, " +
                            fixed(r.reference_s, "%.2f s") + ")";
  for (const NamedFinding& n : named_findings(r)) {
    if (!*n.finding) continue;
    const std::string key = n.key;
    const std::string title = key == "smallest_within_slowdown" ? "smallest " + slowdown
                              : key == "full_speed"             ? speed
                                                                : n.title;
    // fit --gpu's limit is each process's (MPS bounds clients one by one).
    out << "qprof fit: " << (r.gpu ? "per process, " : "") << title << ": " << mib((*n.finding)->limit) << " ("
        << evidence(r, **n.finding) << ")\n";
  }
  if (r.gpu) {
    out << gpu_request(r);
  } else {
    const FitRequests requests = fit_requests(r);
    const auto request = [&out](const char* which, const std::optional<MemoryRequest>& q) {
      if (!q) return;
      out << "qprof fit: request " << which << ": " << slurm_request(*q) << ", " << kubernetes_request(*q) << ", "
          << docker_request(*q) << ", " << systemd_request(*q) << " (" << request_rule(*q) << ")\n";
    };
    request("for full speed", requests.full_speed);
    request("at the smallest limit", requests.smallest);
  }
  for (const std::string& note : r.notes) out << "qprof fit: note: " << terminal_text(note) << '\n';
  if (r.gpu) out << "qprof fit: note: " << terminal_text(r.gpu->dmem) << '\n';
  return out.str();
}

}  // namespace qprof::fit
