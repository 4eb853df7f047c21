// SPDX-License-Identifier: Apache-2.0
#include "unread_members.hpp"

#include <sys/resource.h>

#include <string>

namespace qprof::record::session {

void UnreadMembers::update(std::size_t unread, Notices& notices) {
  if (unread == count_) return;
  if (count_ == 0) {
    rlimit files{};
    ::getrlimit(RLIMIT_NOFILE, &files);
    notices.warn("out of file descriptors (limit " + std::to_string(files.rlim_cur) +
                 "): the /proc files of processes of the tree cannot all be opened; the figures miss those "
                 "processes (counted at the end)");
  }
  count_ = unread;
}

void UnreadMembers::finish(std::size_t unread, Notices& notices, trace::Writer& out) {
  update(unread, notices);
  if (count_ == 0) return;
  notices.warn(std::to_string(count_) +
               " process(es) of the tree could not be read (out of file descriptors): every figure of this run "
               "misses them and is incomplete");
  out.unread(count_);
}

}  // namespace qprof::record::session
