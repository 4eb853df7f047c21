// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/proc_tree.hpp"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "qprof/common/clock.hpp"
#include "qprof/common/proc_parse.hpp"
#include "qprof/common/text.hpp"

namespace qprof::record {
namespace {

// The kernel's getdents64 record; glibc's readdir would allocate its DIR buffer per opendir.
struct LinuxDirent64 {
  std::uint64_t d_ino;
  std::int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

constexpr std::size_t kStatBufferSize = 1024;

bool out_of_descriptors(int err) { return err == EMFILE || err == ENFILE; }

// Descriptors the members' kept files may never take: qprof itself needs some at any time (the
// trace, the marker pipe and FIFO, a thread's start, gnuplot's pipes, a reaped member's status,
// and the sanitizers' own checks, which open a pipe), so a tree too big for the limit costs
// qprof the members it cannot read, never its own work.
constexpr int kDescriptorHeadroom = 32;

int descriptor_ceiling() {
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur == RLIM_INFINITY) return INT_MAX;
  const rlim_t cur = std::min<rlim_t>(files.rlim_cur, INT_MAX);
  return static_cast<int>(cur) > kDescriptorHeadroom ? static_cast<int>(cur) - kDescriptorHeadroom : 0;
}

}  // namespace

void ProcTree::note_unread(pid_t pid) {
  const auto at = std::lower_bound(unread_.begin(), unread_.end(), pid);
  if (at == unread_.end() || *at != pid) unread_.insert(at, pid);
}

ProcTree::ProcTree(std::string proc_root, pid_t self)
    : proc_root_(std::move(proc_root)), self_(self), loadavg_(proc_root_ + "/loadavg"), dents_(1 << 15) {
  proc_dir_fd_ = ::open(proc_root_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  members_.reserve(64);
  // Room for a busy machine, so that other people's processes coming and going do not make
  // the scan allocate.
  listing_.reserve(4096);
  known_.reserve(4096);
  next_known_.reserve(4096);
  fresh_.reserve(512);
}

bool ProcTree::events_allowed() const {
  const char* env = std::getenv("QPROF_PROC_EVENTS");
  return proc_root_ == "/proc" && !(env && std::string_view(env) == "0");
}

void ProcTree::prime(bool use_events) {
  // Subscribed before the listing: a process created in between is in both, and the listing
  // wins (it is an outsider: the command does not exist yet).
  if (use_events && events_allowed()) events_.open();
  if (!list_pids()) return;
  known_.clear();
  for (pid_t pid : listing_) known_.push_back({pid, false});
}

std::optional<proc::Stat> ProcTree::read_stat(pid_t pid) const {
  char path[32];
  std::snprintf(path, sizeof path, "%d/stat", static_cast<int>(pid));
  int fd = ::openat(proc_dir_fd_, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0 && out_of_descriptors(errno) && reserve_fd_ >= 0) {
    // The members' files used every descriptor: the reserve one lets the classification go on,
    // so that a process that cannot be read is still known to be the tree's, and counted.
    ::close(reserve_fd_);
    fd = ::openat(proc_dir_fd_, path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      char buf[kStatBufferSize];
      const ssize_t n = ::read(fd, buf, sizeof buf);
      ::close(fd);
      reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (n <= 0) return std::nullopt;
      return proc::parse_stat(std::string_view(buf, static_cast<std::size_t>(n)));
    }
    reserve_fd_ = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  }
  if (fd < 0) return std::nullopt;
  char buf[kStatBufferSize];
  const ssize_t n = ::read(fd, buf, sizeof buf);
  ::close(fd);
  if (n <= 0) return std::nullopt;
  return proc::parse_stat(std::string_view(buf, static_cast<std::size_t>(n)));
}

void ProcTree::add_root(pid_t root) {
  const auto st = read_stat(root);
  add_member(root, self_, st ? st->start_ticks : 0, true);
  const auto at =
      std::lower_bound(known_.begin(), known_.end(), root, [](const Known& k, pid_t p) { return k.pid < p; });
  if (at != known_.end() && at->pid == root)
    at->member = true;
  else
    known_.insert(at, {root, true});
}

ProcTree::~ProcTree() {
  if (proc_dir_fd_ >= 0) ::close(proc_dir_fd_);
  if (reserve_fd_ >= 0) ::close(reserve_fd_);
}

std::string ProcTree::pid_path(pid_t pid, const char* file) const {
  return proc_root_ + "/" + std::to_string(pid) + "/" + file;
}

void ProcTree::use_cgroup(std::string cgroup_procs_path) {
  cgroup_procs_ = std::move(cgroup_procs_path);
  cgroup_buf_.resize(kCgroupReadWindow);
  // The process events, where qprof may have them, tell a member's fork from anyone else's; a
  // fork before the subscription is in the first read of cgroup.procs, which comes after it.
  if (events_allowed()) events_.open();
}

std::size_t ProcTree::refresh() {
  if (!cgroup_procs_.empty()) return refresh_from_cgroup();
  return events_.is_open() ? refresh_from_events() : refresh_from_scan();
}

bool ProcTree::is_member(pid_t pid) const {
  return std::any_of(members_.begin(), members_.end(), [&](const Member& m) { return m.pid == pid; });
}

std::size_t ProcTree::refresh_from_events() {
  std::size_t joined = 0;
  const bool complete = events_.drain([&](const ProcEvents::Fork& f) {
    if (is_member(f.child)) return;  // the root, added by add_root
    // Whether the parent is the tree's and alive (then the child is its child), or was the
    // tree's and is gone (then the child, orphaned, was adopted by qprof or a subreaper member).
    bool parent_alive = f.parent == self_;
    if (!parent_alive) {
      const auto parent =
          std::find_if(members_.begin(), members_.end(), [&](const Member& m) { return m.pid == f.parent; });
      if (parent != members_.end()) {
        // A member's PID that was reused (it exited, another process took its number) is no
        // longer the member: checked by its start time.
        const auto pst = parent->is_root ? std::optional<proc::Stat>() : read_stat(f.parent);
        parent_alive = parent->is_root || (pst && pst->start_ticks == parent->start_ticks);
      } else if (!departed(f.parent)) {
        return;  // not the tree's
      }
    }
    // The child may be gone already (then its own children, orphans, are the tree's), its PID
    // even reused by then: it joins only if it is still the tree's.
    const auto st = read_stat(f.child);
    if (!st) {
      note_departed(f.child);
      return;
    }
    const auto ppid = static_cast<pid_t>(st->ppid);
    const bool adopted = ppid == self_ || is_member(ppid);
    if (!(adopted || (parent_alive && ppid == f.parent))) return;
    if (add_member(f.child, f.parent, st->start_ticks, false))
      ++joined;
    else
      note_departed(f.child);
  });
  if (!complete) {
    // Events were lost: a scan finds whoever they were about (the loadavg shortcut is no proof
    // of anything here, so it is bypassed).
    last_pid_seen_ = -1;
    joined += refresh_from_scan();
  }
  return joined;
}

void ProcTree::prune() {
  for (const Member& m : members_) {
    if (m.gone) note_departed(m.pid, &m);
  }
  if (std::erase_if(members_, [](const Member& m) { return m.gone; }) > 0) ++generation_;
}

void ProcTree::note_departed(pid_t pid, const Member* m) {
  Departed& d = departed_[departed_seq_ % departed_.size()];
  d = Departed{pid, m ? m->hwm : 0, {}, ++departed_seq_, m && m->reaped_by_qprof};
  if (m) std::memcpy(d.comm, m->comm, sizeof d.comm);
}

const ProcTree::Departed* ProcTree::departed_member(pid_t pid) const {
  const auto it =
      std::find_if(departed_.begin(), departed_.end(), [pid](const Departed& d) { return d.seq > 0 && d.pid == pid; });
  return it == departed_.end() ? nullptr : &*it;
}

bool ProcTree::add_member(pid_t pid, pid_t ppid, std::uint64_t start_ticks, bool is_root) {
  Member m;
  m.pid = pid;
  m.ppid = ppid;
  m.start_ticks = start_ticks;
  m.is_root = is_root;
  // The kernel hands out the lowest free descriptor: one at or above the ceiling means that
  // fewer than the headroom are left.
  const int ceiling = descriptor_ceiling();
  auto within_headroom = [&](ProcFile& f) {
    if (f.is_open() && f.fd() >= ceiling) {
      f = ProcFile();
      errno = EMFILE;
    }
  };
  m.statm = ProcFile(pid_path(pid, "statm"));
  within_headroom(m.statm);
  if (!m.statm.is_open()) {
    if (out_of_descriptors(errno)) note_unread(pid);
    return false;
  }
  // The descriptor must belong to the process that was classified, not to a successor that
  // reused its PID in between: check the start time again now that the descriptor is held.
  if (!is_root) {
    const auto st = read_stat(pid);
    if (!st || st->start_ticks != start_ticks) return false;
  }
  // The slower probes' files; a process too short-lived to open them reads as zeros.
  bool short_of_descriptors = false;
  auto open_probe = [&](const char* file) {
    ProcFile f(pid_path(pid, file));
    within_headroom(f);
    if (!f.is_open() && out_of_descriptors(errno)) short_of_descriptors = true;
    return f;
  };
  m.stat = open_probe("stat");
  m.io = open_probe("io");
  m.status = open_probe("status");
  m.schedstat = open_probe("schedstat");
  if (short_of_descriptors) note_unread(pid);
  members_.push_back(std::move(m));
  ++generation_;
  return true;
}

bool ProcTree::list_pids() {
  if (proc_dir_fd_ < 0) return false;
  listing_.clear();
  if (::lseek(proc_dir_fd_, 0, SEEK_SET) < 0) return false;
  while (true) {
    const long n = ::syscall(SYS_getdents64, proc_dir_fd_, dents_.data(), dents_.size());
    if (n < 0) return false;
    if (n == 0) break;
    for (long off = 0; off < n;) {
      const auto* d = reinterpret_cast<const LinuxDirent64*>(dents_.data() + off);
      pid_t pid;
      if (proc::parse_pid(d->d_name, pid)) listing_.push_back(pid);
      off += d->d_reclen;
    }
  }
  if (!std::is_sorted(listing_.begin(), listing_.end())) std::sort(listing_.begin(), listing_.end());
  ++scans_;
  return true;
}

std::optional<std::int64_t> ProcTree::newest_pid() {
  if (!loadavg_.is_open()) return std::nullopt;
  char buf[128];
  const ssize_t n = loadavg_.read(buf, sizeof buf);
  if (n <= 0) return std::nullopt;
  return proc::parse_loadavg_last_pid(std::string_view(buf, static_cast<std::size_t>(n)));
}

std::size_t ProcTree::refresh_from_scan() {
  if (const auto last = newest_pid()) {
    if (*last == last_pid_seen_) return 0;
    last_pid_seen_ = *last;
  }
  if (!list_pids()) return 0;

  // PIDs not in the previous listing are new; both lists are sorted.
  fresh_.clear();
  auto k = known_.begin();
  for (pid_t pid : listing_) {
    while (k != known_.end() && k->pid < pid) ++k;
    if (k != known_.end() && k->pid == pid) continue;
    fresh_.push_back({pid, 0, 0, -1});
  }
  classify(fresh_);

  std::size_t joined = 0;
  next_known_.clear();
  k = known_.begin();
  auto f = fresh_.begin();
  for (pid_t pid : listing_) {
    while (k != known_.end() && k->pid < pid) ++k;
    if (k != known_.end() && k->pid == pid) {
      next_known_.push_back(*k);
      continue;
    }
    while (f != fresh_.end() && f->pid < pid) ++f;
    const bool member = f != fresh_.end() && f->pid == pid && f->verdict == 1;
    // (With process events, the scan runs after lost events, and finds members the events told.)
    if (member && !is_member(pid) && add_member(pid, f->ppid, f->start_ticks, false)) ++joined;
    // A member that could not be opened has exited already; nothing is lost by forgetting it.
    next_known_.push_back({pid, member});
  }
  known_.swap(next_known_);
  return joined;
}

void ProcTree::classify(std::vector<Fresh>& fresh) {
  for (Fresh& f : fresh) {
    const auto st = read_stat(f.pid);
    if (!st) {
      f.verdict = 0;  // gone already
      continue;
    }
    f.ppid = static_cast<pid_t>(st->ppid);
    f.start_ticks = st->start_ticks;
  }
  // A new process belongs to the tree if its parent is qprof or a member; its parent may itself
  // be new (seen in the same listing), so decide parents first, until nothing changes.
  auto find_fresh = [&](pid_t pid) -> Fresh* {
    auto it = std::lower_bound(fresh.begin(), fresh.end(), pid, [](const Fresh& a, pid_t p) { return a.pid < p; });
    return it != fresh.end() && it->pid == pid ? &*it : nullptr;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (Fresh& f : fresh) {
      if (f.verdict != -1) continue;
      int verdict = 0;
      if (f.ppid == self_) {
        verdict = 1;
      } else if (Fresh* parent = find_fresh(f.ppid)) {
        if (parent->verdict == -1) continue;
        verdict = parent->verdict;
      } else {
        // The parent is a known process; it is a member only if its start time matches too.
        auto member = std::find_if(members_.begin(), members_.end(), [&](const Member& m) { return m.pid == f.ppid; });
        if (member != members_.end()) {
          const auto pst = read_stat(f.ppid);
          verdict = pst && pst->start_ticks == member->start_ticks ? 1 : 0;
        }
      }
      f.verdict = verdict;
      changed = true;
    }
  }
  for (Fresh& f : fresh) {
    if (f.verdict == -1) f.verdict = 0;
  }
}

std::size_t ProcTree::refresh_from_cgroup() {
  // Reading cgroup.procs costs the kernel a sort of the group's PIDs (cgroup v1): 0.23 ms at
  // 512 processes, a fifth of a sample's cost (bench/RESULTS.md). A process joins the group by
  // forking from a member: the group is read again when a member forked, else only once a
  // second, for a process moved into it from outside.
  const std::int64_t now = monotonic_ns();
  if (!member_forked() && now - cgroup_read_ns_ < kCgroupRecheckNs) return 0;
  cgroup_read_ns_ = now;
  // Opened anew each time: cgroup v1 serves a kept descriptor a cached PID list for as long as
  // it is read more often than once a second, so a kept one would never see a new process.
  const int fd = ::open(cgroup_procs_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  // Members by PID, sorted: a group of thousands is checked in n log n, not n² (the list is
  // rebuilt each time in a vector that keeps its capacity: no allocation in the steady state).
  member_pids_.clear();
  for (const Member& m : members_) member_pids_.push_back(m.pid);
  std::sort(member_pids_.begin(), member_pids_.end());
  std::size_t joined = 0;
  // The file is read through a buffer of fixed size, whole lines at a time: however large the
  // group, qprof's memory is not. And up to kCgroupReadLimit bytes: a file that never ends
  // (not the kernel's) does not hold the sampler.
  std::size_t kept = 0;  // bytes of a line cut at the end of the previous read
  std::size_t total = 0;
  while (true) {
    const ssize_t n = ::read(fd, cgroup_buf_.data() + kept, cgroup_buf_.size() - kept);
    if (n < 0 && errno == EINTR) continue;
    if (n > 0) total += static_cast<std::size_t>(n);
    const bool end = n <= 0 || total >= kCgroupReadLimit;
    const std::string_view text(cgroup_buf_.data(), kept + static_cast<std::size_t>(std::max<ssize_t>(n, 0)));
    // At the end of the file, a last line without its newline is whole (the kernel writes one;
    // a file standing in for it may not); after a failed read, it may be cut.
    std::string_view lines = n == 0 ? text : whole_lines(text);
    kept = text.size() - lines.size();
    proc::each_pid_line(lines, [&](pid_t pid) {
      if (std::binary_search(member_pids_.begin(), member_pids_.end(), pid)) return;
      const auto st = read_stat(pid);
      if (st && add_member(pid, static_cast<pid_t>(st->ppid), st->start_ticks, false)) ++joined;
    });
    if (end) break;
    if (kept == cgroup_buf_.size()) kept = 0;  // a line as long as the buffer is no PID
    std::memmove(cgroup_buf_.data(), cgroup_buf_.data() + (text.size() - kept), kept);
  }
  ::close(fd);
  return joined;
}

bool ProcTree::member_forked() {
  if (events_.is_open()) {
    // Other people's forks, which a busy machine makes at every sample, are not the group's.
    bool forked = false;
    const bool complete = events_.drain([&](const ProcEvents::Fork& f) { forked = forked || is_member(f.parent); });
    return forked || !complete;
  }
  // Without the events: a member's fork moves the newest PID of /proc/loadavg, and so does
  // anyone's. It is read before the group, so that a fork after it is seen next time.
  const std::int64_t last = newest_pid().value_or(-1);
  const bool moved = last < 0 || last != cgroup_last_pid_;
  cgroup_last_pid_ = last;
  return moved;
}

std::span<const pid_t> ProcTree::pids() {
  pids_.clear();
  for (const Member& m : members_) pids_.push_back(m.pid);
  return pids_;
}

}  // namespace qprof::record
