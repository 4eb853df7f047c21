// SPDX-License-Identifier: Apache-2.0
// fit --gpu's checks before anything runs, the limit's spelling, CUDA's OOM words, and dmem.
#include <fstream>
#include <sstream>

#include "qprof/common/find_program.hpp"
#include "qprof/common/units.hpp"
#include "qprof/fit/gpu_fit.hpp"
#include "qprof/fit/mps_daemon.hpp"

namespace qprof::fit {
namespace {

constexpr Bytes kMiB = Bytes{1} << 20;

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

bool release_at_least(const std::string& release, int major, int minor) {
  int a = 0, b = 0;
  char dot = 0;
  std::istringstream in(release);
  if (!(in >> a >> dot >> b) || dot != '.') return false;
  return a > major || (a == major && b >= minor);
}

}  // namespace

std::string modes_refusal(const gpu::DeviceModes& modes, int index) {
  const std::string gpu = "GPU " + std::to_string(index);
  if (modes.mig && *modes.mig)
    return gpu +
           " has MIG mode on: MPS limits are not applied to MIG devices by qprof fit --gpu (turn MIG off, "
           "or fit on a GPU without it)";
  if (modes.compute && *modes.compute != gpu::ComputeMode::default_mode) {
    return gpu + "'s compute mode is " + gpu::compute_mode_name(*modes.compute) +
           ": qprof fit --gpu runs the job as a client of an MPS daemon of its own, which needs the Default mode "
           "(nvidia-smi -i " +
           std::to_string(index) + " -c DEFAULT, as root)";
  }
  return "";
}

Result<GpuTarget> check_gpu_target(int index, const gpu::OpenOptions& open,
                                   const std::vector<std::string>& other_pipe_dirs) {
  gpu::Selection s = gpu::open_backend(gpu::Choice::automatic, open);
  const std::string found = s.message.starts_with("GPU: ") ? s.message.substr(5) : s.message;
  if (!s.backend || !s.backend->cuda_devices())
    return Failure{"no NVIDIA GPU found, and qprof fit --gpu limits CUDA device memory; " + found};
  const auto& devices = s.backend->devices();
  std::size_t at = devices.size();
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (devices[i].vendor_index == index && (at == devices.size() || devices[i].parent_uuid.empty())) at = i;
  }
  if (at == devices.size()) return Failure{"no NVIDIA GPU " + std::to_string(index) + " (" + s.message + ")"};
  const gpu::Device& d = devices[at];
  if (const std::string why = modes_refusal(s.backend->modes(at), index); !why.empty()) return Failure{why};
  for (const std::string& dir : other_pipe_dirs) {
    if (mps_daemon_answers(dir))
      return Failure{"another CUDA MPS control daemon answers in " + dir +
                     ": qprof fit --gpu starts one of its own and never shares or stops another (quit that one, or "
                     "run the fit where none runs)"};
  }
  GpuTarget t{index,
              d.parent_uuid.empty() ? d.uuid : d.parent_uuid,
              d.name,
              d.total,
              std::string(s.backend->name()),
              find_program("nvidia-cuda-mps-control")};
  if (t.backend == "nvidia-smi") t.backend = "smi";
  if (t.control.empty())
    return Failure{
        "no nvidia-cuda-mps-control on PATH: qprof fit --gpu limits device memory through CUDA MPS "
        "(the NVIDIA driver's utilities have it)"};
  return t;
}

DmemSupport detect_dmem(const std::string& cgroup_root, const std::string& osrelease) {
  DmemSupport d;
  d.kernel = read_first_line(osrelease);
  d.kernel_new_enough = release_at_least(d.kernel, 6, 14);
  std::istringstream controllers(read_first_line(cgroup_root + "/cgroup.controllers"));
  for (std::string word; controllers >> word;) d.controller = d.controller || word == "dmem";
  std::ifstream capacity(cgroup_root + "/dmem.capacity");
  for (std::string line; std::getline(capacity, line);) {
    std::istringstream in(line);
    std::string region;
    if (in >> region) d.regions.push_back(region);
  }
  return d;
}

std::string dmem_note(const DmemSupport& d) {
  const std::string kernel = d.kernel.empty() ? "this kernel" : "Linux " + d.kernel;
  std::string s;
  if (!d.controller) {
    s = "cgroup v2's dmem controller is not here (" + kernel +
        (d.kernel_new_enough ? ", no dmem in cgroup.controllers" : "; it came with Linux 6.14") + ")";
  } else if (d.regions.empty()) {
    s = "cgroup v2's dmem controller is here (" + kernel + ") but no driver registers device memory with it";
  } else {
    s = "cgroup v2's dmem controller is here (" + kernel + ", regions:";
    for (const std::string& r : d.regions) s += " " + r;
    s += ")";
  }
  return s +
         ". MPS (used here) bounds each client process's device memory on the GPU; dmem would bound the device "
         "memory of a cgroup's processes together";
}

std::string cuda_oom_line(std::string_view text) {
  std::string found;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    for (std::string_view word : kCudaOomMessages) {
      if (line.find(word) != std::string_view::npos) {
        found = std::string(line.substr(0, 300));
        break;
      }
    }
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
  }
  while (!found.empty() && (found.back() == '\r' || found.back() == ' ')) found.pop_back();
  return found;
}

std::string mps_limit_value(Bytes limit) { return "0=" + std::to_string(limit / kMiB) + "M"; }

}  // namespace qprof::fit
