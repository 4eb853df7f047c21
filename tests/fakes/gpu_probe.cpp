// SPDX-License-Identifier: Apache-2.0
// gpu_probe [auto|nvml|amd|smi|none] [PID…]
// Opens a GPU backend exactly as qprof run does (open_backend: $QPROF_NVML_LIBRARY, the
// loader's search with LD_LIBRARY_PATH, $PATH for the smi tools) and prints what it finds:
//   the selection message
//   device <i> <uuid> <total> <name>
//   used <i> <bytes|unknown>
//   tree <i> <bytes> listed=<n> matched=<n>      (for the PIDs given)
// Exit status 0 when a backend was found, 1 when none.
#include <sys/types.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "qprof/gpu/backend.hpp"

int main(int argc, char** argv) {
  using namespace qprof::gpu;
  Choice choice = Choice::automatic;
  std::vector<pid_t> pids;
  for (int i = 1; i < argc; ++i) {
    if (auto c = parse_choice(argv[i])) {
      choice = *c;
    } else {
      pids.push_back(static_cast<pid_t>(std::atol(argv[i])));
    }
  }
  std::sort(pids.begin(), pids.end());
  Selection s = open_backend(choice);
  std::printf("%s\n", s.message.c_str());
  if (!s.backend) return 1;
  const auto& devices = s.backend->devices();
  for (std::size_t i = 0; i < devices.size(); ++i) {
    std::printf("device %zu %s %llu %s\n", i, devices[i].uuid.c_str(),
                static_cast<unsigned long long>(devices[i].total), devices[i].name.c_str());
  }
  std::vector<qprof::Bytes> used(devices.size());
  s.backend->device_used(used);
  for (std::size_t i = 0; i < used.size(); ++i) {
    if (used[i] == kUnknown) {
      std::printf("used %zu unknown\n", i);
    } else {
      std::printf("used %zu %llu\n", i, static_cast<unsigned long long>(used[i]));
    }
  }
  std::vector<DeviceProcesses> out(devices.size());
  s.backend->process_usage(pids, out);
  for (std::size_t i = 0; i < out.size(); ++i) {
    std::printf("tree %zu %llu listed=%u matched=%u\n", i, static_cast<unsigned long long>(out[i].tree), out[i].listed,
                out[i].matched);
  }
  return 0;
}
