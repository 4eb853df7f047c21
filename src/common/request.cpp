// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/request.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "qprof/common/number_text.hpp"
#include "qprof/common/text_wrap.hpp"
#include "qprof/common/units.hpp"

namespace qprof {
namespace {

constexpr Bytes kMiB = Bytes{1} << 20;

Bytes round_up_mib(double bytes) {
  const double mib = std::ceil(bytes / static_cast<double>(kMiB) - 1e-9);
  return static_cast<Bytes>(std::max(1.0, mib)) * kMiB;
}

std::string mib_count(const MemoryRequest& r) { return std::to_string(r.bytes / kMiB); }

std::string percent(double fraction) { return printf_number("%g %%", fraction * 100.0); }

}  // namespace

MemoryRequest memory_request(Bytes measured, std::string basis, double margin, std::optional<Bytes> oom_limit) {
  MemoryRequest r;
  r.measured = measured;
  r.basis = std::move(basis);
  r.margin = margin;
  r.oom_limit = oom_limit;
  r.bytes = round_up_mib(static_cast<double>(measured) * (1.0 + margin));
  if (oom_limit) {
    const double grown =
        std::max(static_cast<double>(*oom_limit + kOomMinBump), static_cast<double>(*oom_limit) * kOomBumpRatio);
    const Bytes after_oom = round_up_mib(grown);
    if (after_oom > r.bytes) {
      r.bytes = after_oom;
      r.grown_after_oom = true;
    }
  }
  return r;
}

std::string slurm_request(const MemoryRequest& r) { return "--mem=" + mib_count(r) + "M"; }
std::string kubernetes_request(const MemoryRequest& r) {
  const std::string m = mib_count(r) + "Mi";
  return "resources: {requests: {memory: " + m + "}, limits: {memory: " + m + "}}";
}
std::string docker_request(const MemoryRequest& r) { return "--memory=" + mib_count(r) + "m"; }
std::string systemd_request(const MemoryRequest& r) { return "MemoryMax=" + mib_count(r) + "M"; }

std::string request_rule(const MemoryRequest& r) {
  if (r.grown_after_oom) {
    return "after the OOM kill at the " + human_bytes(*r.oom_limit) +
           " limit: the larger of +100 MiB and ×1.2, as Kubernetes' VPA grows a request";
  }
  std::string rule = r.basis + " " + human_bytes(r.measured) + " + " + percent(r.margin) + " margin";
  if (r.oom_limit) rule += " (more than the OOM rule's max(+100 MiB, ×1.2) of the limit killed at)";
  return rule;
}

std::string request_block(const MemoryRequest& r, std::size_t width) {
  std::string out;
  out += "slurm       " + slurm_request(r) + '\n';
  out += "kubernetes  " + kubernetes_request(r) + '\n';
  out += "docker      " + docker_request(r) + '\n';
  out += "systemd     " + systemd_request(r) + '\n';
  // The lines to paste stay whole; the rule, a sentence, wraps under its column.
  constexpr std::size_t kColumn = 12;
  out += "rule" + std::string(kColumn - 4, ' ') +
         wrap_text(request_rule(r), std::max(width, kColumn + 20), kColumn, kColumn).substr(kColumn);
  return out;
}

std::optional<double> parse_margin(std::string_view text) {
  if (!text.empty() && text.back() == '%') text.remove_suffix(1);
  double v = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size() || !std::isfinite(v) || v < 0 ||
      v > 1000) {
    return std::nullopt;
  }
  return v / 100.0;
}

}  // namespace qprof
