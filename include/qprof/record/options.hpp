// SPDX-License-Identifier: Apache-2.0
// Everything `qprof run` needs to know, parsed once from the command line (src/cli/run.cpp).
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "qprof/common/request.hpp"
#include "qprof/common/types.hpp"
#include "qprof/record/job.hpp"

namespace qprof::record {

// Whether the tree gets a memory cgroup of its own: then its charge is the footprint's exact
// figure, shared pages counted once, as a cgroup limit counts them.
enum class CgroupMode {
  automatic,  // where qprof may create one below its own (root, a delegated subtree), else not
  on,         // asked for: said on stderr when it cannot be had
  off,
};

struct RunOptions {
  std::vector<std::string> command;
  std::optional<pid_t> attach;    // qprof attach PID: follow this process instead of starting one
  bool live = true;               // the live status line on a terminal (--no-live: off)
  std::string output;             // trace path; empty: qprof_YYYYMMDDhhmmss.dat
  double interval = 0.01;         // seconds between regular samples
  std::optional<double> timeout;  // seconds, then SIGTERM to the tree
  double kill_grace = 5.0;        // seconds between SIGTERM and SIGKILL after the timeout
  bool wait_daemons = true;       // run until the whole tree is gone, not just the command
  bool multiprocess = false;      // CHLD lines per member
  CgroupMode cgroup = CgroupMode::automatic;
  // --mem: the tree's own cgroup gets this memory limit and no swap, as a container's or Slurm's
  // --mem would; the run is refused (exit 2) where qprof may not make that cgroup.
  std::optional<Bytes> memory_limit;
  double margin = kDefaultMargin;  // --margin: the request's margin over the footprint (common/request.hpp)
  bool quiet = false;              // no summary
  bool verbose = false;            // also say what is normal (why no GPU was found)
  std::string metric = "rss";      // the budgets' metric: rss, pss, uss or all
  bool record_pss = true;          // PSS/USS passes (--no-pss: off)
  // Seconds between scheduled PSS passes, stretched where a pass is slow (PssSampler's 5 %
  // budget) and taken once a second while the tree is still. Passes also come at new highs of
  // Σ RSS; the schedule follows a flat or falling footprint densely enough for short stages.
  double pss_interval = 0.1;
  double stats_interval = 0.1;  // seconds between CPU, I/O and VmHWM readings
  std::string gpu = "auto";     // auto, nvml, amd, smi or none
  double gpu_interval = 0.1;    // seconds between per-process GPU queries (stretched if slow)
  std::optional<std::string> marker_regex;
  std::string mark_fifo;                // --mark-fifo: the marker FIFO's path (empty: a private temporary directory)
  std::vector<std::string> watch_dirs;  // --watch-dir and QPROF_WATCH_DIRS: directory sizes (DIR lines)
  double watch_interval = 1.0;          // seconds between walks (stretched to stay within 2 % of a core)
  std::string proc_root = "/proc";
  JobIdentity identity;  // host and launcher ranks, for the header and the default name
};

}  // namespace qprof::record
