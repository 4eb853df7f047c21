#include "qprof/record/cgroup.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace qprof {
namespace {

struct Mount {
  std::string point;
  std::string fstype;
  std::string super_options;
};

std::vector<Mount> cgroup_mounts(const std::string& mountinfo) {
  // mountinfo: "id parent major:minor root mount_point options [optional…] - fstype source super_options"
  std::vector<Mount> out;
  std::ifstream in(mountinfo);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string id, parent, dev, root, point, options, word;
    ls >> id >> parent >> dev >> root >> point >> options;
    while (ls >> word && word != "-") {
    }
    Mount m;
    m.point = point;
    ls >> m.fstype >> word >> m.super_options;
    if (m.fstype == "cgroup" || m.fstype == "cgroup2") out.push_back(std::move(m));
  }
  return out;
}

bool has_option(const std::string& options, const std::string& opt) {
  std::istringstream ss(options);
  std::string o;
  while (std::getline(ss, o, ',')) {
    if (o == opt) return true;
  }
  return false;
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

}  // namespace

TreeCgroup::TreeCgroup(std::string dir, std::string parent, bool v1)
    : dir_(std::move(dir)), parent_(std::move(parent)), v1_(v1) {
  usage_ = ProcFile(dir_ + (v1 ? "/memory.usage_in_bytes" : "/memory.current"));
  peak_ = ProcFile(dir_ + (v1 ? "/memory.max_usage_in_bytes" : "/memory.peak"));
}

std::unique_ptr<TreeCgroup> TreeCgroup::create(std::string& why_not, const std::string& mountinfo) {
  const auto mounts = cgroup_mounts(mountinfo);
  std::string errors;
  auto try_dir = [&](const std::string& parent, bool v1) -> std::unique_ptr<TreeCgroup> {
    const std::string dir = parent + "/" + unique_name();
    if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
      errors += (errors.empty() ? "" : "; ") + std::string("mkdir ") + dir + ": " + std::strerror(errno);
      return nullptr;
    }
    if (!v1 && read_text(dir + "/cgroup.controllers").find("memory") == std::string::npos) {
      // Enabling the controller fails where the parent holds processes itself (cgroup v2's
      // "no internal processes" rule); membership still works without it.
      write_file(parent + "/cgroup.subtree_control", "+memory");
    }
    return std::unique_ptr<TreeCgroup>(new TreeCgroup(dir, parent, v1));
  };
  for (const Mount& m : mounts) {
    if (m.fstype == "cgroup" && has_option(m.super_options, "memory")) {
      if (auto cg = try_dir(m.point, true)) return cg;
    }
  }
  for (const Mount& m : mounts) {
    if (m.fstype == "cgroup2") {
      if (auto cg = try_dir(m.point, false)) return cg;
    }
  }
  why_not = errors.empty() ? "no cgroup v1 memory or cgroup v2 hierarchy is mounted" : errors;
  return nullptr;
}

TreeCgroup::~TreeCgroup() {
  // Processes left behind (daemons under --no-wait-daemons) go to the parent, so the directory
  // can be removed; they keep running.
  std::istringstream procs(read_text(procs_path()));
  std::string pid;
  while (procs >> pid) write_file(parent_ + "/cgroup.procs", pid);
  usage_ = ProcFile();
  peak_ = ProcFile();
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (::rmdir(dir_.c_str()) == 0 || errno == ENOENT) return;
    if (errno != EBUSY) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));  // exiting tasks leave late
  }
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
std::optional<Bytes> TreeCgroup::peak() const { return read_number(peak_); }

}  // namespace qprof
