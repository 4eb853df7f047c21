// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/cgroup.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "qprof/common/proc_file.hpp"
#include "qprof/common/proc_parse.hpp"
#include "qprof/common/text.hpp"

namespace qprof::record {
namespace {

struct Mount {
  std::string root;  // the part of the hierarchy mounted there
  std::string point;
  std::string fstype;
  std::string super_options;
};

// mountinfo grows with the mounts (thousands on a container host); it is read up to this, and
// the mounts past it are not seen.
constexpr std::size_t kMountinfoLimit = std::size_t{16} << 20;

std::vector<Mount> cgroup_mounts(const std::string& mountinfo) {
  // mountinfo: "id parent major:minor root mount_point options [optional…] - fstype source super_options"
  std::vector<Mount> out;
  std::string text;
  if (!read_small_file(mountinfo, text, kMountinfoLimit)) return out;
  std::string_view rest = text;
  if (text.size() >= kMountinfoLimit) rest = whole_lines(rest);  // cut at the bound
  while (!rest.empty()) {
    std::string_view line = take_until(rest, '\n');
    for (int i = 0; i < 3; ++i) take_word(line);  // id, parent, major:minor
    Mount m;
    m.root = take_word(line);
    m.point = take_word(line);
    take_word(line);  // options
    while (!line.empty() && take_word(line) != "-") {
    }
    m.fstype = take_word(line);
    take_word(line);  // source
    m.super_options = take_word(line);
    if (m.fstype == "cgroup" || m.fstype == "cgroup2") out.push_back(std::move(m));
  }
  return out;
}

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

std::string read_text(const std::string& path) {
  std::string text;
  read_small_file(path, text);
  return text;
}

std::string unique_name() { return "qprof-" + std::to_string(::getpid()); }

// qprof's own cgroup in one hierarchy, from the text of /proc/self/cgroup ("4:memory:/a/b" for
// cgroup v1's memory controller, "0::/a/b" for cgroup v2); empty if it is not listed.
std::string own_cgroup(std::string_view proc_cgroup_text, bool v1) {
  std::string_view rest = proc_cgroup_text;
  while (!rest.empty()) {
    const auto line = split_proc_cgroup_line(take_until(rest, '\n'));
    if (!line) continue;
    const bool match = v1 ? list_holds(line->controllers, "memory") : (line->id == "0" && line->controllers.empty());
    if (match) return std::string(line->path);
  }
  return "";
}

// The directory of qprof's own cgroup `own` (see own_cgroup) in the mounted hierarchy `m`;
// empty when it is not in it.
std::string own_cgroup_dir(const Mount& m, const std::string& own) {
  if (own.empty() || own.front() != '/') return "";
  const std::string root = m.root == "/" ? "" : m.root;
  if (!own.starts_with(root) || (own.size() > root.size() && !root.empty() && own[root.size()] != '/')) return "";
  std::string rest = own.substr(root.size());
  while (!rest.empty() && rest.back() == '/') rest.pop_back();
  return m.point + rest;
}

// Moves the group's processes to `parent` (they keep running), then removes the group.
// cgroup.procs is read up to 64 KiB (8192 PIDs of 7 digits): each round moves what it read, and
// the next reads what is left, until one moves nothing (those left are exiting, or cannot move).
bool empty_and_remove(const std::string& dir, const std::string& parent) {
  constexpr int kRounds = 512;  // 512 rounds of 8192 PIDs: pid_max (4 194 304)
  const int to = ::open((parent + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
  for (int round = 0; to >= 0 && round < kRounds; ++round) {
    bool moved = false;
    for (pid_t pid : cgroup_procs_pids(read_text(dir + "/cgroup.procs"))) {
      const std::string text = std::to_string(pid);  // one PID a write: the kernel moves one per write
      moved = ::write(to, text.data(), text.size()) == static_cast<ssize_t>(text.size()) || moved;
    }
    if (!moved) break;
  }
  if (to >= 0) ::close(to);
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (::rmdir(dir.c_str()) == 0 || errno == ENOENT) return true;
    if (errno != EBUSY) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // exiting tasks leave late
  }
  return false;
}

// Groups "qprof-PID" in `parent` whose qprof is dead (SIGKILLed, it could not clean up).
void remove_stale_groups(const std::string& parent) {
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(parent, ec)) {
    const std::string name = e.path().filename().string();
    if (!name.starts_with("qprof-") || !e.is_directory(ec)) continue;
    pid_t pid = 0;
    const char* first = name.data() + 6;
    const auto r = std::from_chars(first, name.data() + name.size(), pid);
    if (r.ec != std::errc() || r.ptr != name.data() + name.size() || pid <= 0 || pid == ::getpid()) continue;
    if (::kill(pid, 0) == 0 || errno == EPERM) continue;  // its qprof (or that PID's new owner) lives
    empty_and_remove(e.path().string(), parent);
  }
}

}  // namespace

std::vector<pid_t> cgroup_procs_pids(std::string_view text) {
  std::vector<pid_t> pids;
  // The kernel ends every line with '\n': a last one without was cut.
  proc::each_pid_line(whole_lines(text), [&](pid_t pid) { pids.push_back(pid); });
  return pids;
}

TreeCgroup::TreeCgroup(std::string dir, std::string parent, bool v1)
    : dir_(std::move(dir)), parent_(std::move(parent)), v1_(v1) {
  usage_ = ProcFile(dir_ + (v1 ? "/memory.usage_in_bytes" : "/memory.current"));
  const std::string peak_path = dir_ + (v1 ? "/memory.max_usage_in_bytes" : "/memory.peak");
  peak_ = ProcFile::adopt(::open(peak_path.c_str(), O_RDWR | O_CLOEXEC));
  resettable_ = peak_.is_open();
  if (!peak_.is_open()) peak_ = ProcFile(peak_path);
}

std::optional<Bytes> TreeCgroup::close_window() {
  if (!resettable_) return std::nullopt;
  const auto window = read_number(peak_);
  if (!window) return std::nullopt;
  // v1 takes "0" (the counter restarts at the current charge); v2 any non-empty string.
  ssize_t n;
  do {
    n = ::pwrite(peak_.fd(), "0\n", 2, 0);
  } while (n < 0 && errno == EINTR);
  if (n != 2) {
    resettable_ = false;  // a kernel before 6.12 (v2): the counter keeps the run's peak
    return std::nullopt;
  }
  closed_peak_ = std::max(closed_peak_, *window);
  return window;
}

bool move_self_to_leaf(const std::string& group) {
  // Only where qprof is alone: moving itself changes no other process's accounting, and every
  // limit above `group` still holds. Elsewhere the processes beside qprof keep the rule in force.
  if (cgroup_procs_pids(read_text(group + "/cgroup.procs")) != std::vector<pid_t>{::getpid()}) return false;
  const std::string leaf = group + "/" + kSelfLeaf;
  if (::mkdir(leaf.c_str(), 0755) != 0 && errno != EEXIST) return false;
  // The kernel's own file: a missing one is not created (a hierarchy that is not cgroup v2).
  const int fd = ::open((leaf + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const std::string pid = std::to_string(::getpid());
  const bool moved = ::write(fd, pid.data(), pid.size()) == static_cast<ssize_t>(pid.size());
  ::close(fd);
  if (!moved) return false;
  write_file(group + "/cgroup.subtree_control", "+memory");
  return true;
}

Result<std::unique_ptr<TreeCgroup>> TreeCgroup::create(const std::string& mountinfo, const std::string& proc_cgroup) {
  const auto mounts = cgroup_mounts(mountinfo);
  const std::string self = read_text(proc_cgroup);
  std::string errors;
  const auto note = [&](const std::string& text) { errors += (errors.empty() ? "" : "; ") + text; };
  // The group goes under qprof's own cgroup, never at the top of the hierarchy: every limit of
  // the groups above (a Slurm job's, a container's) still applies to the tree.
  auto parent_of = [&](const Mount& m, bool v1) -> std::string {
    const std::string own = own_cgroup(self, v1);
    std::string dir = own_cgroup_dir(m, own);
    if (dir.empty()) {
      if (!own.empty()) note("qprof's cgroup " + own + " is outside the hierarchy mounted at " + m.point);
    }
    return dir;
  };
  auto try_dir = [&](const std::string& parent, bool v1) -> std::unique_ptr<TreeCgroup> {
    if (v1 && read_text(parent + "/memory.use_hierarchy").starts_with("0")) {
      // Without hierarchical accounting a child group escapes the limits of its parents.
      note(parent + " has memory.use_hierarchy 0: a group below it would escape its limits");
      return nullptr;
    }
    remove_stale_groups(parent);
    const std::string dir = parent + "/" + unique_name();
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      note("mkdir " + dir + ": " + std::strerror(errno) + " (nesting a cgroup under qprof's own is not permitted)");
      return nullptr;
    }
    if (!v1 && read_text(dir + "/cgroup.controllers").find("memory") == std::string::npos) {
      // Enabling the controller fails where the parent holds processes itself (cgroup v2's
      // "no internal processes" rule); membership still works without it.
      write_file(parent + "/cgroup.subtree_control", "+memory");
      if (read_text(dir + "/cgroup.controllers").find("memory") == std::string::npos) move_self_to_leaf(parent);
    }
    return std::unique_ptr<TreeCgroup>(new TreeCgroup(dir, parent, v1));
  };
  for (const Mount& m : mounts) {
    if (m.fstype == "cgroup" && list_holds(m.super_options, "memory")) {
      const std::string parent = parent_of(m, true);
      if (parent.empty()) continue;
      if (auto cg = try_dir(parent, true)) return cg;
    }
  }
  for (const Mount& m : mounts) {
    if (m.fstype == "cgroup2") {
      const std::string parent = parent_of(m, false);
      if (parent.empty()) continue;
      if (auto cg = try_dir(parent, false)) return cg;
    }
  }
  return Failure{errors.empty() ? "no cgroup v1 memory or cgroup v2 hierarchy is mounted" : errors};
}

TreeCgroup::~TreeCgroup() {
  // Processes left behind (daemons under --no-wait-daemons) go to the parent, so the directory
  // can be removed; they keep running.
  usage_ = ProcFile();
  peak_ = ProcFile();
  empty_and_remove(dir_, parent_);
}

std::optional<Bytes> TreeCgroup::read_number(const ProcFile& f) const {
  char buf[64];
  const ssize_t n = f.read(buf, sizeof buf);
  if (n <= 0) return std::nullopt;
  Bytes v = 0;
  auto r = std::from_chars(buf, buf + n, v);
  if (r.ec != std::errc()) return std::nullopt;
  return v;
}

std::optional<Bytes> TreeCgroup::usage() const { return read_number(usage_); }
std::optional<Bytes> TreeCgroup::peak() const {
  const auto now = read_number(peak_);
  if (!now) return closed_peak_ > 0 ? std::optional<Bytes>(closed_peak_) : std::nullopt;
  return std::max(*now, closed_peak_);
}

std::optional<ProcCgroupLine> split_proc_cgroup_line(std::string_view line) {
  if (std::count(line.begin(), line.end(), ':') < 2) return std::nullopt;
  ProcCgroupLine out;
  out.id = take_until(line, ':');
  out.controllers = take_until(line, ':');
  out.path = line;
  return out;
}

std::optional<MemoryCgroupDir> own_memory_cgroup(const std::string& mountinfo, const std::string& proc_cgroup) {
  const std::string self = read_text(proc_cgroup);
  for (const Mount& m : cgroup_mounts(mountinfo)) {
    const bool v1 = m.fstype == "cgroup";
    if (v1 && !list_holds(m.super_options, "memory")) continue;
    std::string dir = own_cgroup_dir(m, own_cgroup(self, v1));
    if (dir.empty()) continue;
    if (const auto kills = oom_kills_in(dir, v1)) return MemoryCgroupDir{std::move(dir), v1, *kills};
  }
  return std::nullopt;
}

}  // namespace qprof::record
