// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/cgroup_limit.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace qprof::record {

CgroupWrite write_cgroup_file(const std::string& path, std::string_view text, std::string* why) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) {
    if (why) *why = path + ": " + std::strerror(errno);
    return errno == ENOENT ? CgroupWrite::missing : CgroupWrite::refused;
  }
  const bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (!ok && why) *why = path + ": " + std::strerror(errno);
  ::close(fd);
  return ok ? CgroupWrite::done : CgroupWrite::refused;
}

LimitWrite write_memory_limit(const std::string& dir, bool v1, Bytes limit) {
  LimitWrite w;
  const std::string value = std::to_string(limit);
  if (write_cgroup_file(dir + (v1 ? "/memory.limit_in_bytes" : "/memory.max"), value, &w.error) != CgroupWrite::done) {
    return w;
  }
  std::string swap_error;
  const CgroupWrite swap = v1 ? write_cgroup_file(dir + "/memory.memsw.limit_in_bytes", value, &swap_error)
                              : write_cgroup_file(dir + "/memory.swap.max", "0", &swap_error);
  if (swap == CgroupWrite::refused) {
    w.error = swap_error;
    return w;
  }
  w.ok = true;
  w.swap_limited = swap == CgroupWrite::done;
  return w;
}

}  // namespace qprof::record
