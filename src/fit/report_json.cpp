// SPDX-License-Identifier: Apache-2.0
#include <nlohmann/json.hpp>

#include "qprof/common/safe_text.hpp"
#include "qprof/fit/report.hpp"

namespace qprof::fit {
namespace {

using nlohmann::json;

json probe_json(const Probe& p, double baseline_s, bool gpu) {
  json j;
  j["limit_bytes"] = p.limit ? json(p.limit) : json(nullptr);
  j["outcome"] = outcome_key(p.outcome);
  j["seconds"] = p.seconds;
  j["slowdown"] = baseline_s > 0 ? json(p.seconds / baseline_s) : json(nullptr);
  j["major_faults"] = p.major_faults ? json(*p.major_faults) : json(nullptr);
  j["read_bytes"] = p.read_bytes ? json(*p.read_bytes) : json(nullptr);
  j["exit_status"] = p.exit_status;
  j["detail"] = valid_utf8(p.detail);
  if (gpu) {
    const auto bytes = [](const std::optional<Bytes>& b) { return b ? json(*b) : json(nullptr); };
    j["gpu_peak_bytes"] = bytes(p.gpu_peak);
    j["torch_allocated_peak_bytes"] = bytes(p.torch_allocated);
    j["torch_reserved_peak_bytes"] = bytes(p.torch_reserved);
  }
  return j;
}

json gpu_json(const GpuFit& g) {
  return {{"index", g.index},       {"uuid", valid_utf8(g.uuid)},     {"name", valid_utf8(g.name)},
          {"total_bytes", g.total}, {"sampler", g.backend},           {"floor_bytes", g.floor},
          {"method", "mps"},        {"bounds", valid_utf8(g.method)}, {"dmem", valid_utf8(g.dmem)},
          {"limit_per", "process"}};
}

json disagreements_json(const std::vector<Disagreement>& all) {
  json out = json::array();
  for (const Disagreement& d : all)
    out.push_back({{"limit_bytes", d.limit}, {"runs", d.runs}, {"reached", d.reached}, {"probe", d.probe}});
  return out;
}

json input_json(const std::optional<InputReport>& in) {
  if (!in) return nullptr;
  return {{"files", in->files},
          {"size_bytes", in->size},
          {"cached_outside_bytes", in->cached_outside},
          {"cold", in->cold},
          {"baseline_again", in->baseline_again},
          {"left_after_eviction_bytes", in->left_after_eviction},
          {"not_evicted_files", in->not_evicted}};
}

const char* end_key(FitEnd e) {
  switch (e) {
    case FitEnd::searched:
      return "searched";
    case FitEnd::runs_max:
      return "runs_max";
    case FitEnd::interrupted:
      return "interrupted";
    case FitEnd::job_failed:
      return "job_failed";
    case FitEnd::cannot_start:
      return "cannot_start";
    case FitEnd::no_cgroup:
      return "no_cgroup";
    case FitEnd::probe_error:
      return "probe_error";
    case FitEnd::gpu_refused:
      return "gpu_refused";
    case FitEnd::no_gpu_memory:
      return "no_gpu_memory";
  }
  return "searched";
}

}  // namespace

std::string json_report(const FitReport& r) {
  json j;
  j["command"] = valid_utf8(r.command);  // nlohmann escapes the rest; invalid UTF-8 would throw
  j["end"] = end_key(r.end);
  j["status"] = r.status;
  j["message"] = valid_utf8(r.message);
  j["cgroup"] = r.cgroup;
  j["swap_limited"] = r.swap_limited;
  j["max_slowdown"] = r.max_slowdown;
  j["full_speed_margin"] = r.full_speed_margin;
  j["resolution"] = {{"floor_bytes", r.resolution.floor}, {"fraction", r.resolution.fraction}};
  j["cutoff_seconds"] = r.cutoff_s;
  j["reference_seconds"] = r.reference_s;
  const double baseline_s = r.baseline ? r.baseline->run.seconds : 0;
  if (r.baseline) {
    json b = probe_json(r.baseline->run, baseline_s, r.gpu.has_value());
    b["charge_peak_bytes"] = r.baseline->charge_peak;
    b["unreclaimable_peak_bytes"] = r.baseline->unreclaimable_peak;
    j["baseline"] = b;
  } else {
    j["baseline"] = nullptr;
  }
  j["input"] = input_json(r.input);
  j["probes"] = json::array();
  for (const Probe& p : r.probes) j["probes"].push_back(probe_json(p, baseline_s, r.gpu.has_value()));
  json findings = json::object();
  for (const NamedFinding& n : named_findings(r)) {
    if (!*n.finding) {
      findings[n.key] = nullptr;
      continue;
    }
    const Finding& f = **n.finding;
    findings[n.key] = {{"limit_bytes", f.limit},
                       {"probe", f.probe ? json(*f.probe) : json(nullptr)},  // index into probes; null: the baseline
                       // null: no run fell short below it (the unreclaimable peak was assumed to)
                       {"short_of_bytes", measured_short_of(r, f) ? json(f.short_of) : json(nullptr)},
                       {"noisy", disagreements_json(f.noisy)},  // at or above limit: some runs fell short
                       {"not_monotone", disagreements_json(f.not_monotone)}};  // below short_of: some reached
  }
  j["findings"] = findings;
  j["gpu"] = r.gpu ? gpu_json(*r.gpu) : json(nullptr);
  // The requests to paste, with their margin (fit_requests).
  const FitRequests requests = fit_requests(r);
  const auto request = [](const std::optional<MemoryRequest>& q) -> json {
    if (!q) return nullptr;
    return {{"bytes", q->bytes},
            {"slurm", slurm_request(*q)},
            {"kubernetes", kubernetes_request(*q)},
            {"docker", docker_request(*q)},
            {"systemd", systemd_request(*q)},
            {"rule", valid_utf8(request_rule(*q))}};
  };
  // A GPU fit's limits are device memory: no host request is made of them.
  if (!r.gpu)
    j["request"] = {{"margin", r.request_margin},
                    {"full_speed", request(requests.full_speed)},
                    {"smallest_running", request(requests.smallest)}};
  j["notes"] = json::array();
  for (const std::string& n : r.notes) j["notes"].push_back(valid_utf8(n));
  j["qprof_cpu_seconds"] = r.qprof_cpu_s;
  j["eviction_cpu_seconds"] = r.eviction_cpu_s;  // of qprof_cpu_seconds
  j["runs_seconds"] = r.probes_s;
  return j.dump(2) + "\n";
}

}  // namespace qprof::fit
