// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/fd_ostream.hpp"

#include <unistd.h>

#include <cerrno>

namespace qprof::detail {

FdStreamBuf::FdStreamBuf(int fd) : fd_(fd), buffer_(std::size_t{1} << 16) {
  setp(buffer_.data(), buffer_.data() + buffer_.size());
}

bool FdStreamBuf::drain() {
  const char* from = pbase();
  while (from < pptr()) {
    const ssize_t n = ::write(fd_, from, static_cast<std::size_t>(pptr() - from));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error_ = n < 0 ? errno : EIO;
      return false;
    }
    from += n;
  }
  setp(buffer_.data(), buffer_.data() + buffer_.size());
  return true;
}

FdStreamBuf::int_type FdStreamBuf::overflow(int_type c) {
  if (!drain()) return traits_type::eof();
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

int FdStreamBuf::sync() { return drain() ? 0 : -1; }

}  // namespace qprof::detail
