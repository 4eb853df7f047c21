// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/dir_walk.hpp"

#include <fts.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <cerrno>
#include <cstring>
#include <unordered_set>

namespace qprof::record {
namespace {

Bytes free_space(const std::string& path) {
  struct statvfs vfs {};
  if (::statvfs(path.c_str(), &vfs) != 0) return 0;
  return static_cast<Bytes>(vfs.f_bavail) * static_cast<Bytes>(vfs.f_frsize);
}

// The free space where the directory will appear: that of its nearest existing parent.
Bytes free_space_of_parent(std::string path) {
  while (!path.empty()) {
    const std::size_t slash = path.find_last_of('/');
    if (slash == std::string::npos) return free_space(".");
    path.resize(slash == 0 ? 1 : slash);
    if (const Bytes f = free_space(path); f > 0 || path == "/") return f;
  }
  return 0;
}

void problem(DirSize& out, const char* path, int err) {
  if (out.problems.size() < DirSize::kMaxProblems)
    out.problems.push_back(std::string(path) + ": " + std::strerror(err));
  else
    ++out.more_problems;
}

struct DevIno {
  dev_t dev;
  ino_t ino;
  bool operator==(const DevIno& o) const { return dev == o.dev && ino == o.ino; }
};
struct DevInoHash {
  std::size_t operator()(const DevIno& k) const { return std::hash<ino_t>()(k.ino) * 31 + std::hash<dev_t>()(k.dev); }
};

}  // namespace

DirSize walk_dir(const std::string& path) {
  DirSize out;
  struct stat root {};
  if (::stat(path.c_str(), &root) != 0) {
    if (errno != ENOENT && errno != ENOTDIR) problem(out, path.c_str(), errno);
    out.fs_free = free_space_of_parent(path);
    return out;
  }
  out.exists = true;
  out.fs_free = free_space(path);
  char* roots[] = {const_cast<char*>(path.c_str()), nullptr};
  FTS* fts = ::fts_open(roots, FTS_PHYSICAL | FTS_COMFOLLOW | FTS_XDEV | FTS_NOCHDIR, nullptr);
  if (fts == nullptr) {
    problem(out, path.c_str(), errno);
    return out;
  }
  std::unordered_set<DevIno, DevInoHash> linked;  // files with several names, seen once
  while (FTSENT* e = ::fts_read(fts)) {
    switch (e->fts_info) {
      case FTS_DP:
        continue;    // a directory again, after its contents
      case FTS_DNR:  // counted itself, its contents not
      case FTS_ERR:
      case FTS_NS:
        problem(out, e->fts_path, e->fts_errno);
        if (e->fts_info != FTS_DNR) continue;
        break;
      default:
        break;
    }
    const struct stat* st = e->fts_statp;
    ++out.entries;
    if (!S_ISDIR(st->st_mode) && st->st_nlink > 1 && !linked.insert({st->st_dev, st->st_ino}).second) continue;
    out.allocated += static_cast<Bytes>(st->st_blocks) * 512;
    if (S_ISREG(st->st_mode)) out.apparent += static_cast<Bytes>(st->st_size);
  }
  ::fts_close(fts);
  return out;
}

}  // namespace qprof::record
