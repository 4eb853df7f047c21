// SPDX-License-Identifier: Apache-2.0
// The PSS thread's own look for members forked since the sampler thread's last look at the tree.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>

#include "qprof/common/proc_parse.hpp"
#include "qprof/record/pss_sampler.hpp"

namespace qprof::record {
namespace {

// Appends to `text` what the file at `path` under `dir_fd` holds; false when it cannot be read.
bool read_at(int dir_fd, const char* path, std::string& text) {
  const int fd = ::openat(dir_fd, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) text.append(buf, static_cast<std::size_t>(n));
  ::close(fd);
  return n == 0;
}

// The PIDs in `text`, separated by spaces: a children file.
void parse_pids(std::string_view text, std::vector<pid_t>& out) {
  const char* p = text.data();
  const char* const end = p + text.size();
  while (p < end) {
    while (p < end && (*p == ' ' || *p == '\n')) ++p;
    pid_t pid = 0;
    const auto r = std::from_chars(p, end, pid);
    if (r.ec != std::errc() || r.ptr == p) break;
    out.push_back(pid);
    p = r.ptr;
  }
}

// The children of the process `pid`, whose task directory is `task`: those its main thread forked,
// or with `all_threads` those of every thread (a child's parent is the thread that forked it: a
// pool or subprocess started from a thread), one file a thread.
void children_of(pid_t pid, const ProcFile& task, bool all_threads, std::vector<pid_t>& out, std::string& text) {
  if (!all_threads) {
    text.clear();
    if (read_at(task.fd(), (std::to_string(pid) + "/children").c_str(), text)) parse_pids(text, out);
    return;
  }
  const int fd = ::dup(task.fd());
  if (fd < 0) return;
  DIR* dir = ::fdopendir(fd);
  if (dir == nullptr) {
    ::close(fd);
    return;
  }
  while (const dirent* e = ::readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    text.clear();
    if (read_at(task.fd(), (std::string(e->d_name) + "/children").c_str(), text)) parse_pids(text, out);
  }
  ::closedir(dir);
}

}  // namespace

std::optional<std::int64_t> PssSampler::last_pid() {
  char buf[128];
  const ssize_t n = loadavg_.is_open() ? loadavg_.read(buf, sizeof buf) : -1;
  return n > 0 ? proc::parse_loadavg_last_pid(std::string_view(buf, static_cast<std::size_t>(n))) : std::nullopt;
}

bool PssSampler::shmem_gap_worth_a_look() {
  const auto now = last_pid();
  return !now || !outside_sharer_at_ || *now != *outside_sharer_at_;
}

bool PssSampler::forked_since(std::optional<std::int64_t>& seen) {
  const auto now = last_pid();
  const bool moved = !now || !seen || *now != *seen;
  seen = now;
  // A PID is taken before the child is linked to its parent: after a move, one more look.
  const bool look = moved || look_again_;
  look_again_ = moved;
  return look;
}

std::size_t PssSampler::add_children(bool all_threads) {
  std::vector<pid_t> known;
  known.reserve(targets_.size());
  for (const Target& t : targets_) known.push_back(t.pid);
  std::sort(known.begin(), known.end());
  const std::size_t before = targets_.size();
  // The targets added are looked at in turn: a child's own children are the tree's too.
  for (std::size_t i = 0; i < targets_.size(); ++i) {
    children_.clear();
    children_of(targets_[i].pid, targets_[i].dir.open("task"), all_threads, children_, text_);
    for (const pid_t child : children_) {
      const auto at = std::lower_bound(known.begin(), known.end(), child);
      if (at != known.end() && *at == child) continue;
      known.insert(at, child);
      targets_.push_back({child, 0, ProcDir(proc_root_ + "/" + std::to_string(child)), true});
      targets_.back().parent = targets_[i].pid;
    }
  }
  return targets_.size() - before;
}

}  // namespace qprof::record
