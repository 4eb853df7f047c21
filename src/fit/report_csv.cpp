// SPDX-License-Identifier: Apache-2.0
#include <sstream>

#include "qprof/common/csv_cell.hpp"
#include "qprof/fit/report.hpp"

namespace qprof::fit {
namespace {

template <class T>
std::string maybe(const std::optional<T>& v) {
  return v ? std::to_string(*v) : "";
}

void probe_row(std::ostringstream& out, const char* kind, const std::string& name, const Probe& p, double baseline_s,
               bool gpu) {
  out << kind << ',' << name << ',' << (p.limit ? std::to_string(p.limit) : "") << ',' << outcome_key(p.outcome) << ','
      << p.seconds << ',' << (baseline_s > 0 ? std::to_string(p.seconds / baseline_s) : "") << ','
      << maybe(p.major_faults) << ',' << maybe(p.read_bytes) << ',' << p.exit_status << ',' << csv_cell(p.detail);
  if (gpu) out << ',' << maybe(p.gpu_peak) << ',' << maybe(p.torch_allocated) << ',' << maybe(p.torch_reserved);
  out << '\n';
}

}  // namespace

std::string csv_report(const FitReport& r) {
  std::ostringstream out;
  // fit --gpu: three columns more, the device and torch figures of each run.
  const bool gpu = r.gpu.has_value();
  const std::string more = gpu ? ",,," : "";
  out << "kind,name,limit_bytes,outcome,seconds,slowdown,major_faults,read_bytes,exit_status,detail"
      << (gpu ? ",gpu_peak_bytes,torch_allocated_bytes,torch_reserved_bytes" : "") << '\n';
  out << "command," << csv_cell(r.command) << ",,,,,,,," << csv_cell(r.message) << more << '\n';
  const double baseline_s = r.baseline ? r.baseline->run.seconds : 0;
  if (r.baseline) probe_row(out, "baseline", "", r.baseline->run, baseline_s, gpu);
  for (std::size_t i = 0; i < r.probes.size(); ++i)
    probe_row(out, "probe", std::to_string(i), r.probes[i], baseline_s, gpu);
  for (const NamedFinding& n : named_findings(r)) {
    if (!*n.finding) continue;
    const Finding& f = **n.finding;
    const std::string peak = gpu ? "the unlimited run's peak on the device" : "the unlimited run's peak charge";
    out << "finding," << n.key << ',' << f.limit << ",,,,,,,"
        << csv_cell(f.probe            ? "probe " + std::to_string(*f.probe)
                    : r.probes.empty() ? peak + ", no limited run: not measured"
                                       : peak)
        << more << '\n';
  }
  return out.str();
}

}  // namespace qprof::fit
