// Everything `qprof run` needs to know, parsed once from the command line (src/cli/run.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace qprof {

struct RunOptions {
  std::vector<std::string> command;
  std::string output;                 // trace path; empty: qprof_YYYYMMDDhhmmss.dat
  double interval = 0.01;             // seconds between regular samples
  std::optional<double> timeout;      // seconds, then SIGTERM to the tree
  double kill_grace = 5.0;            // seconds between SIGTERM and SIGKILL after the timeout
  bool wait_daemons = true;           // run until the whole tree is gone, not just the command
  bool multiprocess = false;          // CHLD lines per member
  bool cgroup = false;                // track the tree with a cgroup of its own
  bool quiet = false;                 // no summary
  std::string metric = "rss";         // rss, pss, uss or all: pss/uss/all also record PSS and USS
  double pss_interval = 0.1;          // seconds between PSS passes (stretched if a pass is slow)
  double stats_interval = 0.1;        // seconds between CPU, I/O and VmHWM readings
  std::string gpu = "auto";           // auto, nvml, amd, smi or none
  double gpu_interval = 0.1;          // seconds between per-process GPU queries (stretched if slow)
  std::optional<std::string> marker_regex;
  std::string proc_root = "/proc";
};

}  // namespace qprof
