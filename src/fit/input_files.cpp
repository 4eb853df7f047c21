// SPDX-License-Identifier: Apache-2.0
#include "qprof/fit/input_files.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <set>

#include "qprof/common/proc_file.hpp"

namespace qprof::fit {
namespace {

constexpr std::size_t kMaxFiles = 4096;       // a job with more is described by its first ones
constexpr Bytes kWindow = Bytes{1} << 30;     // mincore is asked a GiB at a time
constexpr std::size_t kMapsLimit = 16 << 20;  // a large job's maps, whole

bool owned(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && st.st_uid == ::geteuid();
}

// The system's own files (the locale archive, the loader's cache, an interpreter's library) are
// everyone's: cached by every process, never the job's input.
bool system_file(const std::string& path) {
  for (const char* dir : {"/usr/", "/lib/", "/lib64/", "/lib32/", "/bin/", "/sbin/", "/etc/", "/proc/", "/sys/",
                          "/dev/", "/run/", "/var/cache/", "/nix/store/"}) {
    if (path.starts_with(dir)) return true;
  }
  return false;
}

// Whether /proc/PID/fdinfo/N says the descriptor was opened write-only ("flags:" in octal).
bool write_only(const std::string& fdinfo) {
  std::string text;
  if (!read_small_file(fdinfo, text)) return false;
  const std::size_t at = text.find("flags:");
  if (at == std::string::npos) return false;
  const unsigned long flags = std::strtoul(text.c_str() + at + 6, nullptr, 8);
  return (flags & O_ACCMODE) == O_WRONLY;
}

}  // namespace

std::vector<std::string> data_mapping_paths(std::string_view maps) {
  // Read at every sample of a job with hundreds of mappings: views into the text, no streams.
  std::vector<std::string_view> data;
  std::set<std::string_view> code;
  while (!maps.empty()) {
    const std::size_t nl = maps.find('\n');
    std::string_view line = maps.substr(0, nl);
    maps.remove_prefix(nl == std::string_view::npos ? maps.size() : nl + 1);
    std::string_view field[5];  // range, perms, offset, dev, inode
    bool whole = true;
    for (std::string_view& f : field) {
      const std::size_t start = line.find_first_not_of(' ');
      const std::size_t end = start == std::string_view::npos ? start : line.find(' ', start);
      if (end == std::string_view::npos) {
        whole = false;
        break;
      }
      f = line.substr(start, end - start);
      line.remove_prefix(end);
    }
    if (!whole || field[4] == "0" || field[1].size() < 3) continue;
    const std::size_t path_at = line.find_first_not_of(' ');
    if (path_at == std::string_view::npos) continue;
    const std::string_view path = line.substr(path_at);
    if (!path.starts_with('/') || path.ends_with(" (deleted)")) continue;
    if (field[1][2] == 'x') {
      code.insert(path);
    } else {
      data.push_back(path);
    }
  }
  // A file with code mapped anywhere is a program or a library, its read-only parts included.
  std::vector<std::string> out;
  std::set<std::string_view> said;
  for (const std::string_view path : data) {
    if (!code.contains(path) && said.insert(path).second) out.emplace_back(path);
  }
  return out;
}

void InputFiles::add(const std::string& path) {
  if (files_.size() >= kMaxFiles || !seen_.insert(path).second || system_file(path)) return;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0) return;
  for (const File& f : files_) {
    if (f.dev == st.st_dev && f.ino == st.st_ino) return;
  }
  files_.push_back({path, st.st_dev, st.st_ino, static_cast<Bytes>(st.st_size)});
}

void InputFiles::scan(const std::vector<pid_t>& pids, bool with_maps) {
  for (pid_t pid : pids) {
    const std::string proc = "/proc/" + std::to_string(pid);
    if (DIR* d = ::opendir((proc + "/fd").c_str())) {
      while (const dirent* e = ::readdir(d)) {
        if (e->d_name[0] == '.') continue;
        char target[4096];
        const ssize_t n = ::readlink((proc + "/fd/" + e->d_name).c_str(), target, sizeof target - 1);
        if (n <= 0 || target[0] != '/') continue;                 // pipes, sockets, anonymous inodes
        if (write_only(proc + "/fdinfo/" + e->d_name)) continue;  // a log the job writes, not its input
        add(std::string(target, static_cast<std::size_t>(n)));
      }
      ::closedir(d);
    }
    std::string maps;
    if (with_maps && read_small_file(proc + "/maps", maps, kMapsLimit)) {
      for (const std::string& path : data_mapping_paths(maps)) add(path);
    }
  }
}

Bytes InputFiles::size() const {
  Bytes total = 0;
  for (const File& f : files_) total += f.size;
  return total;
}

int InputFiles::reopen(const File& f) const {
  // Non-blocking: a path that names a FIFO now must not hang qprof; the inode check rejects it.
  const int fd = ::open(f.path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return -1;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || st.st_dev != f.dev || st.st_ino != f.ino) {
    ::close(fd);
    return -1;
  }
  return fd;
}

Bytes InputFiles::resident() const {
  const Bytes page = static_cast<Bytes>(::sysconf(_SC_PAGESIZE));
  Bytes total = 0;
  std::vector<unsigned char> vec;
  for (const File& f : files_) {
    const int fd = reopen(f);
    if (fd < 0) continue;
    // The kernel answers mincore on a file only to who may write it (or owns it, or is root):
    // to anyone else it says every page is in memory, which would be no measure.
    if (::geteuid() != 0 && ::faccessat(AT_FDCWD, f.path.c_str(), W_OK, AT_EACCESS) != 0 && !owned(fd)) {
      ::close(fd);
      continue;
    }
    // Mapping a file reads none of it; mincore says which of its pages are in memory.
    for (Bytes at = 0; at < f.size; at += kWindow) {
      const Bytes len = std::min(kWindow, f.size - at);
      void* p = ::mmap(nullptr, len, PROT_READ, MAP_SHARED, fd, static_cast<off_t>(at));
      if (p == MAP_FAILED) break;
      vec.assign((len + page - 1) / page, 0);
      if (::mincore(p, len, vec.data()) == 0) {
        total +=
            page * static_cast<Bytes>(std::count_if(vec.begin(), vec.end(), [](unsigned char c) { return c & 1; }));
      }
      ::munmap(p, len);
    }
    ::close(fd);
  }
  return total;
}

std::size_t InputFiles::evict() const {
  std::size_t failed = 0;
  for (const File& f : files_) {
    const int fd = reopen(f);
    if (fd < 0 || ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0) ++failed;
    if (fd >= 0) ::close(fd);
  }
  return failed;
}

}  // namespace qprof::fit
