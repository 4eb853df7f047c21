// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/proc_events.hpp"

#include <arpa/inet.h>
#include <linux/cn_proc.h>
#include <linux/connector.h>
#include <linux/filter.h>
#include <linux/netlink.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>

namespace qprof::record {
namespace {

constexpr std::size_t kHeader = NLMSG_HDRLEN + sizeof(cn_msg);

// The connector's messages: a netlink header, a cn_msg, then its payload.
const cn_msg* connector_message(const char* data, std::size_t size) {
  if (size < kHeader) return nullptr;
  nlmsghdr nl;
  std::memcpy(&nl, data, sizeof nl);
  if (nl.nlmsg_len < kHeader || nl.nlmsg_len > size || nl.nlmsg_type == NLMSG_ERROR) return nullptr;
  return reinterpret_cast<const cn_msg*>(data + NLMSG_HDRLEN);
}

}  // namespace

namespace {

// PROC_CN_MCAST_LISTEN or _IGNORE, in the original 4-byte form (every kernel since 2.6.15 takes it).
bool send_op(int fd, proc_cn_mcast_op op, std::uint32_t ack) {
  char request[NLMSG_SPACE(sizeof(cn_msg) + sizeof(proc_cn_mcast_op))] = {};
  nlmsghdr nl{};
  nl.nlmsg_len = NLMSG_LENGTH(sizeof(cn_msg) + sizeof(proc_cn_mcast_op));
  nl.nlmsg_type = NLMSG_DONE;
  cn_msg msg{};
  msg.id.idx = CN_IDX_PROC;
  msg.id.val = CN_VAL_PROC;
  msg.ack = ack;
  msg.len = sizeof(proc_cn_mcast_op);
  std::memcpy(request, &nl, sizeof nl);
  std::memcpy(request + NLMSG_HDRLEN, &msg, sizeof msg);
  std::memcpy(request + kHeader, &op, sizeof op);
  return ::send(fd, request, nl.nlmsg_len, 0) == static_cast<ssize_t>(nl.nlmsg_len);
}

// Lets through only what parse() takes, a new process (a fork whose child is a thread group's
// first thread): the exec, exit and thread events of every process on the machine are dropped
// in the kernel, on the forking task's time, instead of being copied to qprof and looked at
// there (a short process's exec and exit: two of its three messages; every thread's fork and
// exit).
// Classic BPF, which every kernel runs on a netlink socket; its absolute loads read 32 bits in
// network order, hence the constant in that order too.
bool keep_only_new_processes(int fd) {
  constexpr std::uint32_t kWhat = kHeader + offsetof(proc_event, what);
  constexpr std::uint32_t kChildPid = kHeader + offsetof(proc_event, event_data.fork.child_pid);
  constexpr std::uint32_t kChildTgid = kHeader + offsetof(proc_event, event_data.fork.child_tgid);
  sock_filter code[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kWhat),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, htonl(proc_event::PROC_EVENT_FORK), 0, 5),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kChildPid),
      BPF_STMT(BPF_MISC | BPF_TAX, 0),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kChildTgid),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_X, 0, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, 0xFFFFFFFF),  // the whole message
      BPF_STMT(BPF_RET | BPF_K, 0),           // dropped (also a message too short to hold them)
  };
  const sock_fprog program{static_cast<unsigned short>(std::size(code)), code};
  return ::setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &program, sizeof program) == 0;
}

}  // namespace

ProcEvents::~ProcEvents() {
  if (fd_ < 0) return;
  // Kernels before 6.6 count listeners until told otherwise, closing included: without this,
  // every fork on the machine would go on building an event for nobody.
  send_op(fd_, PROC_CN_MCAST_IGNORE, 0);
  ::close(fd_);
}

bool ProcEvents::open() {
  // Once subscribed, the subscription stands: a second socket would double every event, and
  // the first, overwritten, would stay subscribed until exit (and on kernels before 6.6 count as
  // a listener after it, see the destructor).
  if (fd_ >= 0) return true;
  const int fd = ::socket(PF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_CONNECTOR);
  if (fd < 0) return false;
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  addr.nl_groups = CN_IDX_PROC;
  // Room for a burst of a busy machine's events between two samples (FORCE works for root).
  int bytes = 4 << 20;
  if (::setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof bytes) != 0) {
    ::setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &bytes, sizeof bytes);
  }
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return false;
  }
  // The kernel numbers its messages itself (seq), but answers our `ack` + 1: that is how its
  // acknowledgement is told from another subscriber's.
  const std::uint32_t ack = static_cast<std::uint32_t>(::getpid());
  if (!send_op(fd, PROC_CN_MCAST_LISTEN, ack)) {
    ::close(fd);
    return false;
  }
  // The kernel handles the request within send(): its acknowledgement is queued by now, unless
  // it ignored the request (another PID or user namespace) or refused it (no CAP_NET_ADMIN).
  // Events of other processes may come first.
  char reply[kMessageBytes];
  while (true) {
    const ssize_t n = ::recv(fd, reply, sizeof reply, MSG_DONTWAIT);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    const cn_msg* m = connector_message(reply, static_cast<std::size_t>(n));
    if (!m || m->ack != ack + 1) continue;
    if (static_cast<std::size_t>(n) < kHeader + sizeof(proc_event)) break;
    proc_event ev;
    std::memcpy(&ev, reply + kHeader, sizeof ev);
    if (ev.what != proc_event::PROC_EVENT_NONE || ev.event_data.ack.err != 0) break;
    // After the acknowledgement, which the filter would drop. Without it (refused: nothing
    // known), every event comes through and parse() sorts them as before.
    filtered_ = keep_only_new_processes(fd);
    for (std::size_t i = 0; i < kBatch; ++i) {
      iov_[i] = {buffers_[i].data(), kMessageBytes};
      headers_[i] = {};
      headers_[i].msg_hdr.msg_iov = &iov_[i];
      headers_[i].msg_hdr.msg_iovlen = 1;
    }
    fd_ = fd;
    return true;
  }
  send_op(fd, PROC_CN_MCAST_IGNORE, 0);  // in case it did listen after all
  ::close(fd);
  return false;
}

int ProcEvents::receive(bool& complete) {
  while (true) {
    const int n = ::recvmmsg(fd_, headers_.data(), kBatch, MSG_DONTWAIT, nullptr);
    if (n >= 0) {
      received_ += static_cast<std::uint64_t>(n);
      return n;
    }
    if (errno == EINTR) continue;
    if (errno == ENOBUFS) {  // the kernel dropped events; the queue goes on after them
      complete = false;
      continue;
    }
    return 0;  // EAGAIN: nothing queued
  }
}

bool ProcEvents::parse(int i, Fork& f) const {
  const char* data = buffers_[static_cast<std::size_t>(i)].data();
  const std::size_t size = headers_[static_cast<std::size_t>(i)].msg_len;
  const cn_msg* m = connector_message(data, size);
  if (!m || m->id.idx != CN_IDX_PROC || m->id.val != CN_VAL_PROC) return false;
  if (size < kHeader + sizeof(proc_event)) return false;
  proc_event ev;
  std::memcpy(&ev, data + kHeader, sizeof ev);
  if (ev.what != proc_event::PROC_EVENT_FORK) return false;
  const auto& fork = ev.event_data.fork;
  if (fork.child_pid != fork.child_tgid) return false;  // a new thread, not a process
  f.parent = fork.parent_tgid;
  f.child = fork.child_tgid;
  return true;
}

}  // namespace qprof::record
