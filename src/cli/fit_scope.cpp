// SPDX-License-Identifier: Apache-2.0
// qprof fit where qprof may not create memory cgroups but a systemd user manager runs: qprof runs
// itself again in a delegated scope of that manager (fit/systemd_scope.hpp says why that works).
#include "fit_scope.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include "qprof/common/find_program.hpp"
#include "qprof/common/sigpipe.hpp"
#include "qprof/common/safe_text.hpp"
#include "qprof/fit/probe_group.hpp"
#include "qprof/fit/systemd_scope.hpp"
#include "stderr_speaker.hpp"

namespace qprof::cli {
namespace {

// qprof's own argv as the kernel keeps it: the words exactly as given, whatever CLI11 made of them.
std::vector<std::string> own_cmdline() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  std::vector<std::string> words;
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = text.find('\0', at);
    words.push_back(text.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return words;
}

}  // namespace

void rerun_fit_in_user_scope_if_needed() {
  Result<std::unique_ptr<fit::ProbeGroup>> probe = fit::ProbeGroup::create();
  const bool may_create = probe.ok();
  if (probe) probe->reset();  // the test group goes at once
  const bool in_scope = std::getenv(fit::kInScopeVariable) != nullptr;
  if (may_create || in_scope) return;
  std::error_code ec;
  const std::string exe = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  const auto argv =
      fit::rerun_in_scope_argv(may_create, in_scope, fit::systemd_user_manager_available(), exe, own_cmdline());
  if (!argv) return;
  const std::string runner = find_program(argv->front());
  if (runner.empty()) return;
  stderr_speaker("fit").line("qprof may not create memory cgroups here (" + terminal_text(probe.failure().message) +
                             "); running again in a systemd user scope with its cgroup delegated (systemd-run --user "
                             "--scope -p Delegate=yes)");
  std::vector<char*> words;
  for (const std::string& w : *argv) words.push_back(const_cast<char*>(w.c_str()));
  words.push_back(nullptr);
  ::setenv(fit::kInScopeVariable, "1", 1);
  child_process::restore_sigpipe();       // the qprof started again ignores it as this one did, no more
  ::execv(runner.c_str(), words.data());  // replaces qprof: its PID, terminal and exit status pass on
  const int error = errno;
  ::unsetenv(fit::kInScopeVariable);
  stderr_speaker("fit").line("cannot run " + terminal_text(runner) + ": " + std::strerror(error));
}

}  // namespace qprof::cli
