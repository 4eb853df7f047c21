// SPDX-License-Identifier: Apache-2.0
// An std::ostream onto a file descriptor it does not own (OutputFile's), for writers that stream
// through an ostream (qprof export): buffered, and a failed write sets badbit and keeps errno.
#pragma once

#include <ostream>
#include <streambuf>
#include <vector>

namespace qprof {

namespace detail {
class FdStreamBuf : public std::streambuf {
 public:
  explicit FdStreamBuf(int fd);
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override;
  int sync() override;

 private:
  bool drain();
  int fd_;
  int error_ = 0;
  std::vector<char> buffer_;
};

// The buffer is a base, built before the std::ostream that is given a pointer to it.
struct FdStreamBufHolder {
  explicit FdStreamBufHolder(int fd) : buf(fd) {}
  FdStreamBuf buf;
};
}  // namespace detail

class FdOstream : private detail::FdStreamBufHolder, public std::ostream {
 public:
  explicit FdOstream(int fd) : detail::FdStreamBufHolder(fd), std::ostream(&buf) {}
  // The errno of the write that failed, 0 when none did.
  int error() const { return buf.error(); }
};

}  // namespace qprof
