// SPDX-License-Identifier: Apache-2.0
#include "qprof/analysis/dirs.hpp"
#include "qprof/report/request.hpp"
#include "qprof/trace/footprint.hpp"
#include "qprof/trace/oom.hpp"

namespace qprof::report {
using trace::Trace;

std::optional<MemoryRequest> trace_request(const Trace& trace, double margin) {
  const auto footprint = trace::footprint_of(trace);
  if (!footprint) return std::nullopt;
  std::optional<Bytes> killed_at;
  for (const trace::OomKill& k : trace.oom_kills) {
    if (k.limit) killed_at = killed_at ? std::max(*killed_at, *k.limit) : *k.limit;
  }
  if (!trace.oom_kills.empty() && !killed_at) {
    if (const auto limit = analysis::memory_limit(trace)) killed_at = limit->bytes;
  }
  return memory_request(footprint->peak, "footprint", margin, killed_at);
}

namespace {

// The request's facts: request, request_margin, request_rule and one per form.
void add_request_facts(Document& doc, const MemoryRequest& request) {
  auto fact = [&](std::string key, std::string title, Kind kind, Cell cell) {
    doc.facts.push_back({Column::of(std::move(key), std::move(title), kind), std::move(cell)});
  };
  fact("request", "request", Kind::bytes, Cell::bytes(request.bytes));
  fact("request_margin", "request margin", Kind::share, Cell::number(request.margin));
  fact("request_rule", "request rule", Kind::text, Cell::string(request_rule(request)));
  fact("request_slurm", "Slurm", Kind::text, Cell::string(slurm_request(request)));
  fact("request_kubernetes", "Kubernetes", Kind::text, Cell::string(kubernetes_request(request)));
  fact("request_docker", "Docker", Kind::text, Cell::string(docker_request(request)));
  fact("request_systemd", "systemd", Kind::text, Cell::string(systemd_request(request)));
}

}  // namespace

Document request_document(const MemoryRequest& request) {
  Document doc;
  add_request_facts(doc, request);
  return doc;
}

void add_oom_and_request_facts(Document& doc, const Trace& trace, double margin) {
  std::vector<Document::Fact> kills;
  for (std::size_t i = 0; i < trace.oom_kills.size(); ++i) {
    const std::string key = i == 0 ? "oom_kill" : "oom_kill_" + std::to_string(i + 1);
    kills.push_back({Column::of(key, "OOM kill", Kind::text),
                     Cell::string(trace::describe_oom_kill(trace.oom_kills[i], trace.t0()))});
  }
  // Said first: an OOM kill explains the figures that follow (a worker gone, a peak at the limit).
  const std::size_t after_command = std::min<std::size_t>(2, doc.facts.size());
  doc.facts.insert(doc.facts.begin() + static_cast<std::ptrdiff_t>(after_command), kills.begin(), kills.end());
  if (const auto request = trace_request(trace, margin)) add_request_facts(doc, *request);
}

}  // namespace qprof::report
