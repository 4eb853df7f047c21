// SPDX-License-Identifier: Apache-2.0
// qprof --version: the version, the build type, and which GPU backends work on this machine.
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "commands.hpp"
#include "qprof/common/text_wrap.hpp"
#include "qprof/common/version.hpp"
#include "qprof/gpu/backend.hpp"

#ifndef QPROF_BUILD_TYPE
#define QPROF_BUILD_TYPE "unknown"
#endif

namespace qprof::cli {
namespace {

bool on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return false;
  std::string p = path;
  std::size_t start = 0;
  while (start <= p.size()) {
    const std::size_t colon = p.find(':', start);
    const std::string dir = p.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
    if (!dir.empty() && ::access((dir + "/" + program).c_str(), X_OK) == 0) return true;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  return false;
}

// The backends are loaded at run time (docs/gpus.md, "Backends"): say which would work here.
std::string backend_line(gpu::Choice c) {
  const std::string name(gpu::choice_name(c));
  if (c == gpu::Choice::smi) {
    const bool nv = on_path("nvidia-smi"), rocm = on_path("rocm-smi");
    if (!nv && !rocm) return name + ": no (no nvidia-smi or rocm-smi on PATH)";
    return name + ": yes (" + std::string(nv ? "nvidia-smi" : "") + (nv && rocm ? ", " : "") +
           (rocm ? "rocm-smi" : "") + ")";
  }
  const gpu::Selection s = gpu::open_backend(c);
  if (s.backend) return name + ": yes (" + s.backend->description() + ")";
  const std::size_t open = s.message.find('(' + name + ": ");
  std::string why = open == std::string::npos ? s.message : s.message.substr(open + name.size() + 3);
  if (const std::size_t close = why.rfind(')'); close != std::string::npos) why.erase(close);
  return name + ": no (" + why + ")";
}

}  // namespace

std::string version_text() {
  std::string out =
      "qprof " + std::string(kVersion) + "\nbuild: " + QPROF_BUILD_TYPE + "\nGPU backends (loaded at run time):";
  for (gpu::Choice c : {gpu::Choice::nvml, gpu::Choice::amd, gpu::Choice::smi}) out += "\n  " + backend_line(c);
  // The terminal's width (80 into a pipe): a loader's message is long. CLI11 adds the last '\n'.
  out = fit_lines(out, output_columns(STDOUT_FILENO));
  out.pop_back();
  return out;
}

}  // namespace qprof::cli
