// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/job.hpp"

#include <unistd.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <ctime>

namespace qprof::record {
namespace {

struct Source {
  const char* variable;
  const char* launcher;  // who sets it, named when it gives the rank
};

constexpr Source kRank[] = {{"RANK", "torchrun"},
                            {"OMPI_COMM_WORLD_RANK", "openmpi"},
                            {"PMIX_RANK", "pmix"},
                            {"PMI_RANK", "pmi"},
                            {"SLURM_PROCID", "slurm"}};
constexpr Source kLocalRank[] = {{"LOCAL_RANK", "torchrun"},
                                 {"OMPI_COMM_WORLD_LOCAL_RANK", "openmpi"},
                                 {"MPI_LOCALRANKID", "pmi"},
                                 {"SLURM_LOCALID", "slurm"}};
constexpr Source kWorldSize[] = {
    {"WORLD_SIZE", "torchrun"}, {"OMPI_COMM_WORLD_SIZE", "openmpi"}, {"PMI_SIZE", "pmi"}, {"SLURM_NTASKS", "slurm"}};
constexpr Source kJobId[] = {
    {"SLURM_JOB_ID", "slurm"}, {"TORCHELASTIC_RUN_ID", "torchrun"}, {"OMPI_MCA_ess_base_jobid", "openmpi"}};

std::optional<std::int64_t> whole_number(std::string_view s) {
  std::int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

template <std::size_t N>
std::optional<std::int64_t> first_number(const EnvLookup& env, const Source (&sources)[N], const char** launcher,
                                         std::vector<std::string>& warnings) {
  for (const Source& s : sources) {
    const char* v = env(s.variable);
    if (!v || !*v) continue;
    if (auto n = whole_number(v)) {
      if (launcher) *launcher = s.launcher;
      return n;
    }
    warnings.push_back(std::string(s.variable) + "='" + v + "' is not a whole number; ignored");
  }
  return std::nullopt;
}

std::string machine_host() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "unknown";
  return buf;
}

// A value inside a file name: no directory separators, no control characters.
std::string file_safe(std::string_view v) {
  std::string out(v);
  for (char& c : out) {
    if (c == '/' || static_cast<unsigned char>(c) < 0x20 || c == 0x7F) c = '_';
  }
  return out;
}

std::string utc_millis(Seconds t) {
  const double whole = std::floor(t);
  const std::time_t secs = static_cast<std::time_t>(whole);
  int ms = static_cast<int>(std::lround((t - whole) * 1000));
  if (ms > 999) ms = 999;
  std::tm utc{};
  gmtime_r(&secs, &utc);
  char buf[64];
  const std::size_t n = std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%S", &utc);
  return std::string(buf, n) + "." + (ms < 100 ? (ms < 10 ? "00" : "0") : "") + std::to_string(ms) + "Z";
}

}  // namespace

JobIdentity detect_job(const EnvLookup& env, const std::string& host_override) {
  JobIdentity id;
  if (!host_override.empty()) {
    id.host = host_override;
  } else if (const char* h = env("QPROF_HOSTNAME"); h && *h) {
    id.host = h;
  } else {
    id.host = machine_host();
  }
  const char* launcher = nullptr;
  id.job.rank = first_number(env, kRank, &launcher, id.warnings);
  if (launcher) id.job.launcher = launcher;
  id.job.local_rank = first_number(env, kLocalRank, nullptr, id.warnings);
  id.job.world_size = first_number(env, kWorldSize, nullptr, id.warnings);
  for (const Source& s : kJobId) {
    const char* v = env(s.variable);
    if (!v || !*v) continue;
    // torchrun's --rdzv_id defaults to "none": every job would share it.
    if (std::string_view(s.variable) == "TORCHELASTIC_RUN_ID" && std::string_view(v) == "none") continue;
    id.job.job_id = v;
    break;
  }
  return id;
}

JobIdentity detect_job(const std::string& host_override) {
  return detect_job([](const char* name) { return static_cast<const char*>(std::getenv(name)); }, host_override);
}

Result<std::string> expand_output(std::string_view pattern, const JobIdentity& id, pid_t pid, Seconds start) {
  std::string out, error;
  auto number = [&](const std::optional<std::int64_t>& v, const char* what, const char* where) -> bool {
    if (!v) {
      error = std::string("-o uses ") + what + " but no launcher set it (" + where + ")";
      return false;
    }
    out += std::to_string(*v);
    return true;
  };
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] != '%') {
      out += pattern[i];
      continue;
    }
    if (i + 1 == pattern.size()) return Failure{"-o ends with a lone '%' (write %% for a percent sign)"};
    const char c = pattern[++i];
    bool ok = true;
    switch (c) {
      case '%':
        out += '%';
        break;
      case 'h':
        out += file_safe(id.host);
        break;
      case 'p':
        out += std::to_string(pid);
        break;
      case 't':
        out += utc_millis(start);
        break;
      case 'r':
        ok = number(id.job.rank, "%r (the rank)", "RANK, OMPI_COMM_WORLD_RANK, PMIX_RANK, PMI_RANK, SLURM_PROCID");
        break;
      case 'l':
        ok = number(id.job.local_rank, "%l (the local rank)",
                    "LOCAL_RANK, OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID");
        break;
      case 'w':
        ok = number(id.job.world_size, "%w (the world size)",
                    "WORLD_SIZE, OMPI_COMM_WORLD_SIZE, PMI_SIZE, SLURM_NTASKS");
        break;
      case 'j':
        if (id.job.job_id.empty()) {
          error =
              "-o uses %j (the job id) but no launcher set it (SLURM_JOB_ID, TORCHELASTIC_RUN_ID, "
              "OMPI_MCA_ess_base_jobid)";
          ok = false;
        } else {
          out += file_safe(id.job.job_id);
        }
        break;
      default:
        error = std::string("-o has an unknown placeholder %") + c + " (known: %h %r %l %w %p %t %j %%)";
        ok = false;
    }
    if (!ok) return Failure{error};
  }
  return out;
}

}  // namespace qprof::record
