// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/fd_ostream.hpp"

#include <string_view>

#include "qprof/common/write_all.hpp"

namespace qprof::detail {

FdStreamBuf::FdStreamBuf(int fd) : fd_(fd), buffer_(std::size_t{1} << 16) {
  setp(buffer_.data(), buffer_.data() + buffer_.size());
}

bool FdStreamBuf::drain() {
  const WriteOutcome w = write_all(fd_, std::string_view(pbase(), static_cast<std::size_t>(pptr() - pbase())));
  if (!w.ok()) {
    error_ = w.error;
    return false;
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
