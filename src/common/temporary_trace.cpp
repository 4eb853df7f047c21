// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/temporary_trace.hpp"

#include <cstdlib>

namespace qprof {

Result<TemporaryTrace> create_temporary_trace(std::string_view prefix) {
  constexpr std::string_view kSuffix = ".dat";
  const char* tmpdir = std::getenv("TMPDIR");
  const std::string dir = tmpdir && *tmpdir ? tmpdir : "/tmp";
  std::string path = dir + "/" + std::string(prefix) + "-XXXXXX" + std::string(kSuffix);
  const int fd = ::mkstemps(path.data(), static_cast<int>(kSuffix.size()));
  if (fd < 0) return Failure{"cannot create a temporary trace in " + dir};
  return TemporaryTrace{fd, std::move(path)};
}

}  // namespace qprof
