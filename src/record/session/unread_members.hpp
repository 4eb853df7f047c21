// SPDX-License-Identifier: Apache-2.0
// Members of the tree whose /proc files could not be opened (qprof out of file descriptors):
// said once as it starts, counted, and at the end said again and written to the trace, since
// every figure of the run misses them.
#pragma once

#include <cstddef>
#include <cstdint>

#include "notices.hpp"

namespace qprof::record::session {

class UnreadMembers {
 public:
  // The tree's count of unread members now.
  void update(std::size_t unread, Notices& notices);
  // At the end, with the final count.
  void finish(std::size_t unread, Notices& notices, trace::Writer& out);
  std::uint64_t count() const { return count_; }

 private:
  std::uint64_t count_ = 0;
};

}  // namespace qprof::record::session
