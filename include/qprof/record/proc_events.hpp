// SPDX-License-Identifier: Apache-2.0
// The kernel's process-event connector (netlink PROC_EVENTS): every fork on the machine, as it
// happens, without listing /proc. It tells which process forked which, so the tree's membership
// costs one recvmmsg per sample however busy the machine is, instead of a scan of every process
// whenever any PID was allocated; a socket filter has the kernel drop the other events (exec,
// exit, new threads) before they are queued to qprof. It needs CAP_NET_ADMIN and qprof in the
// initial PID and user namespaces (the kernel answers the subscription with an acknowledgement
// only then); where it is refused, ProcTree keeps its /proc scan.
#pragma once

#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <array>
#include <cstdint>

namespace qprof::record {

class ProcEvents {
 public:
  ProcEvents() = default;
  ~ProcEvents();
  ProcEvents(const ProcEvents&) = delete;
  ProcEvents& operator=(const ProcEvents&) = delete;

  // Subscribes; true once the kernel acknowledged (events flow from now on). Called again once
  // subscribed: true, the same subscription.
  bool open();
  bool is_open() const { return fd_ >= 0; }
  // Whether the kernel drops every event but a new process's before queueing it (a socket
  // filter; false: all come, and drain() sorts them).
  bool filtered() const { return filtered_; }
  // Messages received so far, whatever they held (the filter's test).
  std::uint64_t received() const { return received_; }

  struct Fork {
    pid_t parent;  // the forking process (thread group)
    pid_t child;   // the new process
  };
  // Hands every process creation queued since the last call to on_fork, in order (threads are
  // left out). Returns false if the kernel dropped events (the socket's buffer overflowed):
  // the caller must then find newcomers another way. Allocates nothing.
  template <typename F>
  bool drain(F&& on_fork) {
    bool complete = true;
    while (true) {
      const int n = receive(complete);
      for (int i = 0; i < n; ++i) {
        Fork f;
        if (parse(i, f)) on_fork(f);
      }
      if (n < static_cast<int>(kBatch)) return complete;
    }
  }

 private:
  static constexpr std::size_t kBatch = 64;
  static constexpr std::size_t kMessageBytes = 256;
  // Receives up to kBatch queued messages without waiting; clears `complete` on an overflow.
  int receive(bool& complete);
  bool parse(int i, Fork& f) const;

  int fd_ = -1;
  bool filtered_ = false;
  std::uint64_t received_ = 0;
  std::array<std::array<char, kMessageBytes>, kBatch> buffers_{};
  std::array<iovec, kBatch> iov_{};
  std::array<mmsghdr, kBatch> headers_{};
};

}  // namespace qprof::record
