// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/write_all.hpp"

#include <unistd.h>

#include <cerrno>

namespace qprof {

WriteOutcome write_all(int fd, std::string_view bytes) {
  WriteOutcome out;
  while (out.written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + out.written, bytes.size() - out.written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      out.error = n < 0 ? errno : EIO;
      break;
    }
    out.written += static_cast<std::size_t>(n);
  }
  return out;
}

}  // namespace qprof
