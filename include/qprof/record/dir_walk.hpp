// SPDX-License-Identifier: Apache-2.0
// The size of one directory tree, by a recursive walk (fts): what `--watch-dir` records.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "qprof/common/types.hpp"

namespace qprof::record {

struct DirSize {
  bool exists = false;        // false: counted as empty, fs_free of the nearest existing parent
  Bytes apparent = 0;         // Σ st_size of regular files (Quark's figure), hard links once
  Bytes allocated = 0;        // Σ st_blocks × 512 of every entry, the directory itself included (du's figure)
  Bytes fs_free = 0;          // statvfs f_bavail × f_frsize: free to unprivileged users
  std::uint64_t entries = 0;  // entries visited, for the cost per file
  // Paths inside that could not be read ("PATH: reason"), at most kMaxProblems of them.
  std::vector<std::string> problems;
  std::uint64_t more_problems = 0;  // beyond those listed
  static constexpr std::size_t kMaxProblems = 4;
};

// Walks `path` without following symbolic links (the root itself is followed when it is one) and
// without crossing into other file systems: a mount inside a cache directory (a bind mount, a
// tmpfs) is another disk's space, and statvfs's free space is of one file system only. Hard links
// count once (keyed by device and inode). Never throws; an unreadable part is a problem.
DirSize walk_dir(const std::string& path);

}  // namespace qprof::record
