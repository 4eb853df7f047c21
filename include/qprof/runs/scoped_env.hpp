// SPDX-License-Identifier: Apache-2.0
// An environment variable set for one run, and put back as it was after it: the command inherits
// qprof's environment (execv), and nothing else runs in qprof between the runs.
#pragma once

#include <optional>
#include <string>

namespace qprof::runs {

class ScopedEnv {
 public:
  ScopedEnv(const std::string& name, const std::string& value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

}  // namespace qprof::runs
