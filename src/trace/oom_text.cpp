// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/units.hpp"
#include "qprof/trace/oom.hpp"

namespace qprof::trace {

std::string describe_oom_kill(const OomKill& k, std::optional<Seconds> run_start) {
  std::string text = k.pid > 0 ? "process " + std::to_string(k.pid) : "a process of the tree";
  if (!k.name.empty() || !k.role.empty()) {
    text += " (" + k.name;
    if (!k.role.empty())
      text += std::string(k.name.empty() ? "" : ", ") + (k.role == "command" ? "the command" : "a worker");
    text += ")";
  }
  text += " killed by the kernel's OOM killer";
  if (run_start) text += " at " + human_seconds(k.t - *run_start);
  if (!k.stage.empty()) text += ", in stage " + k.stage;
  if (k.scope == "machine") {
    text += ": the machine was out of memory";
  } else {
    text += ": the memory limit";
    if (k.limit) text += " of " + human_bytes(*k.limit);
    if (!k.scope.empty()) text += " (cgroup " + k.scope + ")";
    text += " was reached";
  }
  if (k.held) text += "; it held " + human_bytes(*k.held);
  if (k.tree)
    text += std::string(k.held ? ", " : "; ") + "the tree " + human_bytes(*k.tree) + " in the last sample before";
  const char* how = k.source == "kernel-log" ? " (kernel log)"
                    : k.source == "exit"     ? " (SIGKILL and the cgroup's oom_kill count)"
                                             : " (the cgroup's oom_kill count)";
  return text + how;
}

std::string oom_kills_title(std::size_t kills) {
  return kills == 1 ? "OOM kill" : std::to_string(kills) + " OOM kills";
}

}  // namespace qprof::trace
