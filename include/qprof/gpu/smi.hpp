// SPDX-License-Identifier: Apache-2.0
// The last-resort GPU backend: the vendors' command-line tools. nvidia-smi runs as two
// long-running children (-lms: one process, not a fork per sample), one printing each GPU's use,
// one the compute processes; rocm-smi (a Python program, slow per call) is run by one
// long-lived shell helper on request, on a schedule paced by its own cost. The parsers are here
// so tests can feed them recorded output; the backend itself: open_smi (gpu.hpp).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "qprof/trace/trace.hpp"

namespace qprof::gpu::smi {

// A CSV field of nvidia-smi --format=csv,noheader,nounits in MiB: "[N/A]", "[Not Supported]"
// and anything else not a number: nullopt.
std::optional<Bytes> parse_mib(std::string_view field);

// nvidia-smi --query-gpu=index,uuid,memory.total,memory.used,name
struct GpuRow {
  int index = -1;
  std::string uuid;
  std::optional<Bytes> total, used;
  std::string name;
};
bool parse_gpu_row(std::string_view line, GpuRow& out);

// nvidia-smi --query-gpu=uuid,memory.used (the -lms loop)
bool parse_used_row(std::string_view line, std::string& uuid, std::optional<Bytes>& used);

// nvidia-smi --query-compute-apps=pid,gpu_uuid,used_memory (the -lms loop)
struct AppRow {
  pid_t pid = 0;
  std::string uuid;
  std::optional<Bytes> used;
};
bool parse_app_row(std::string_view line, AppRow& out);

// rocm-smi --showmeminfo vram [--showbus] [--showproductname] --json, as ROCm 4 to 6 print it
// (with or without log lines around the JSON). nullopt when no JSON object is found.
struct RocmCard {
  std::string key;  // card0
  std::string bus;  // PCI address, with --showbus
  std::string name;
  std::optional<Bytes> total, used;
};
std::optional<std::vector<RocmCard>> parse_rocm_meminfo(std::string_view text);

// rocm-smi --showpids --json: {"system": {"PID1234": "name, gpus, vram, sdma, cu"}} (ROCm ≥ 5;
// older ones print the name only: no memory). An empty object, or none, is "no processes".
struct RocmProcess {
  pid_t pid = 0;
  std::optional<Bytes> vram;  // over every GPU the process uses
  int gpus = 0;               // how many GPUs it uses; 0 when not said
};
std::optional<std::vector<RocmProcess>> parse_rocm_pids(std::string_view text);

}  // namespace qprof::gpu::smi
