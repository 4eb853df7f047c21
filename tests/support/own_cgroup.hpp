// SPDX-License-Identifier: Apache-2.0
// The test process's own cgroup v1 memory group, as /proc/self/cgroup names it ("/" at the root,
// "" where there is no v1 memory hierarchy): where the cgroup tests create their groups, so that
// the limits above the test still apply to them.
#pragma once

#include <fstream>
#include <string>

namespace qprof::test {

inline std::string own_v1_memory_group() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    const auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    if (line.substr(a + 1, b - a - 1) == "memory") return line.substr(b + 1);
  }
  return "";
}

}  // namespace qprof::test
