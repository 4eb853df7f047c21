// SPDX-License-Identifier: Apache-2.0
// qprof fit --gpu's own CUDA MPS control daemon: `nvidia-cuda-mps-control -d` started with a
// pipe and a log directory of its own (made for it, removed after it), so that only the probes,
// which are given the same CUDA_MPS_PIPE_DIRECTORY, are its clients and another daemon on the
// machine is never touched. Stopped with `echo quit | nvidia-cuda-mps-control` (same
// directories) when asked or when the object goes, on every path out of the search.
#pragma once

#include <sys/types.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "qprof/common/failure.hpp"

namespace qprof::fit {

// The default pipe directory of MPS: clients and daemons that set no CUDA_MPS_PIPE_DIRECTORY.
inline constexpr const char* kDefaultMpsPipeDir = "/tmp/nvidia-mps";

// Whether a control daemon answers in `pipe_dir`: its `control` socket accepts a connection (a
// socket left by a daemon that died refuses it).
bool mps_daemon_answers(const std::string& pipe_dir);

// What a tool run said: its exit status (or 128 + signal; -1: it could not be started or was
// killed at its deadline) and its output (stdout and stderr, the first 64 KiB).
struct ToolRun {
  int status = -1;
  std::string output;
};
// Runs argv (argv[0] a path) with `env` added to qprof's environment and `input` on its stdin,
// for at most timeout_s (then SIGKILL). Its output goes to a file, not a pipe: a daemon it
// forks keeps no descriptor qprof would wait on.
ToolRun run_tool(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env,
                 const std::string& input, double timeout_s);

class MpsDaemon {
 public:
  // Starts the daemon with `control` (the path of nvidia-cuda-mps-control), its server seeing
  // only the GPU `device_uuid` (CUDA_VISIBLE_DEVICES), its directories below $TMPDIR or /tmp.
  static Result<std::unique_ptr<MpsDaemon>> start(const std::string& control, const std::string& device_uuid);
  ~MpsDaemon();  // stop(), its failure unsaid: the caller that cares calls stop() first
  MpsDaemon(const MpsDaemon&) = delete;
  MpsDaemon& operator=(const MpsDaemon&) = delete;

  // Asks the daemon to quit, waits for it to go (10 s, then SIGKILL to its PID), removes the
  // directories. Idempotent; a Failure says what did not go as it should.
  Result<void> stop();

  // What a client needs to find this daemon (and only it).
  std::vector<std::pair<std::string, std::string>> client_environment() const;
  const std::string& pipe_dir() const { return pipe_dir_; }
  std::optional<pid_t> pid() const { return pid_; }

 private:
  MpsDaemon(std::string control, std::string root);
  std::string control_, root_, pipe_dir_, log_dir_;
  std::optional<pid_t> pid_;  // from the daemon's pid file
  bool stopped_ = false;
};

}  // namespace qprof::fit
