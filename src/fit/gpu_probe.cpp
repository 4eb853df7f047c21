// SPDX-License-Identifier: Apache-2.0
#include "gpu_probe.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "qprof/common/units.hpp"
#include "qprof/fit/gpu_fit.hpp"
#include "qprof/record/launcher.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::fit {
namespace {

constexpr const char* kLimitVariable = "CUDA_MPS_PINNED_DEVICE_MEM_LIMIT";
constexpr std::size_t kStderrTail = 256 << 10;  // CUDA's message is near the end of what a job says

// The limit in qprof's environment for one launch: fit is single-threaded while it starts a probe.
class LimitInEnvironment {
 public:
  explicit LimitInEnvironment(const std::optional<Bytes>& limit) {
    if (limit) {
      ::setenv(kLimitVariable, mps_limit_value(*limit).c_str(), 1);
    } else {
      ::unsetenv(kLimitVariable);
    }
  }
  ~LimitInEnvironment() { ::unsetenv(kLimitVariable); }
  LimitInEnvironment(const LimitInEnvironment&) = delete;
  LimitInEnvironment& operator=(const LimitInEnvironment&) = delete;
};

std::string tail_of(int fd) {
  const off_t size = ::lseek(fd, 0, SEEK_END);
  if (size <= 0) return "";
  const off_t from = size > static_cast<off_t>(kStderrTail) ? size - static_cast<off_t>(kStderrTail) : 0;
  std::string text(static_cast<std::size_t>(size - from), '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), from);
  text.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
  return text;
}

std::string last_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.pop_back();
  const auto nl = text.rfind('\n');
  return (nl == std::string::npos ? text : text.substr(nl + 1)).substr(0, 300);
}

// The tree's figures on the device and torch's, from the probe's trace.
void read_figures(const std::string& path, const std::string& uuid, GpuProbeResult& out) {
  trace::Trace t;
  try {
    t = trace::read_trace(path);
  } catch (const std::exception& e) {
    out.trace_problem = e.what();
    return;
  }
  std::optional<int> device;
  for (const trace::GpuDevice& d : t.gpu_devices) {
    if (d.uuid == uuid) device = d.index;
  }
  if (device) {
    Bytes peak = 0;
    for (const trace::GpuSample& g : t.gpu) {
      if (g.device != *device) continue;
      peak = std::max(peak, g.tree);
      if (g.tree > 0) out.floor = std::min(out.floor.value_or(g.tree), g.tree);
    }
    out.probe.gpu_peak = peak;
  }
  for (const trace::TorchSample& s : t.torch) {
    out.probe.torch_allocated = std::max(out.probe.torch_allocated.value_or(0), s.allocated);
    out.probe.torch_reserved = std::max(out.probe.torch_reserved.value_or(0), s.reserved);
  }
}

std::vector<std::string> qprof_run_argv(const GpuProbeRequest& r, const std::string& trace_path) {
  std::error_code ec;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  // --cgroup off: the probe group is the tree's; --no-pss: host figures are not the subject.
  std::vector<std::string> argv{self,       "run",   "-q",      "--no-live", "--cgroup", "off",
                                "--no-pss", "--gpu", r.backend, "-o",        trace_path, "--"};
  argv.insert(argv.end(), r.command.begin(), r.command.end());
  return argv;
}

std::string describe(const ProbeRun& run, Outcome outcome, const std::string& oom_line, const std::string& last,
                     double deadline_s) {
  const int status = WIFEXITED(run.wait_status) ? WEXITSTATUS(run.wait_status) : 0;
  switch (outcome) {
    case Outcome::completed:
      return "exit status 0";
    case Outcome::too_slow:
      return "still running at " + human_seconds(deadline_s) + ", stopped by qprof";
    case Outcome::cuda_oom:
      return "exit status " + std::to_string(status) + ": " + oom_line;
    default:
      break;
  }
  std::string s = WIFSIGNALED(run.wait_status) ? "killed by " + record::signal_name(WTERMSIG(run.wait_status))
                                               : "exit status " + std::to_string(status);
  return s + ", no CUDA out-of-memory message" + (last.empty() ? "" : ": " + last);
}

}  // namespace

Outcome gpu_outcome_of(int wait_status, bool stopped_as_too_slow, const std::string& oom_line) {
  if (stopped_as_too_slow) return Outcome::too_slow;
  if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) return Outcome::completed;
  return oom_line.empty() ? Outcome::failed : Outcome::cuda_oom;
}

GpuProbeResult run_gpu_probe(const GpuProbeRequest& r, ProbeGroup& group, const StopSignals& signals) {
  GpuProbeResult out;
  const std::string stem = r.work_dir + "/probe-" + std::to_string(r.number);
  const int err = ::open((stem + ".stderr").c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  {
    const LimitInEnvironment limit(r.limit);
    out.run = run_probe(qprof_run_argv(r, stem + ".dat"), group, signals, {r.deadline_s, 0, err});
  }
  const std::string text = err >= 0 ? tail_of(err) : "";
  if (err >= 0) ::close(err);
  if (out.run.launch_failure || out.run.stopped_by_signal) return out;
  const std::string oom = cuda_oom_line(text);
  Probe& p = out.probe;
  p.limit = r.limit.value_or(0);
  p.seconds = out.run.seconds;
  p.outcome = gpu_outcome_of(out.run.wait_status, out.run.stopped_at_deadline, oom);
  p.exit_status = record::describe_wait_status(out.run.wait_status, "", record::KillSource::unknown).exit_status;
  p.detail = describe(out.run, p.outcome, oom, last_line(text), r.deadline_s.value_or(0));
  read_figures(stem + ".dat", r.device_uuid, out);
  return out;
}

}  // namespace qprof::fit
