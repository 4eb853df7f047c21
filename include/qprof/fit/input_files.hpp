// SPDX-License-Identifier: Apache-2.0
// The files a job reads, seen while its unlimited run runs: the regular files its processes hold
// open (/proc/PID/fd) or map for data (/proc/PID/maps, not executable: its program and libraries
// are left out, and so are the system's own files under /usr, /etc, /lib...). After that run's
// own page cache is evicted, what of them is still in page cache was charged to another cgroup: the job read it without
// being charged for it, so no limit would have pushed it out. --cold drops those pages before each run
// (POSIX_FADV_DONTNEED: clean pages no process maps; dirty or mapped pages stay, and what stayed is measured).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "qprof/common/types.hpp"

namespace qprof::fit {

// The paths of the file mappings in a /proc/PID/maps text that are not executable (data: a mapped
// model or dataset), each once.
std::vector<std::string> data_mapping_paths(std::string_view maps);

class InputFiles {
 public:
  // Adds the regular, non-empty files the processes hold open, and (`with_maps`) map for data.
  void scan(const std::vector<pid_t>& pids, bool with_maps = true);
  std::size_t count() const { return files_.size(); }
  Bytes size() const;  // their sizes summed
  // Of it, in page cache now (mincore). Files the user may not write and does not own are left
  // out: the kernel does not tell anyone else.
  Bytes resident() const;
  // Asks the kernel to drop their clean, unmapped pages from the page cache (every file, whoever
  // read it). Returns how many files it could not open.
  std::size_t evict() const;

 private:
  struct File {
    std::string path;
    dev_t dev = 0;
    ino_t ino = 0;
    Bytes size = 0;
  };
  void add(const std::string& path);
  int reopen(const File& f) const;  // -1 where the path is gone or names another file now
  std::vector<File> files_;
  std::set<std::string> seen_;  // every path looked at once: the samples come every 10 ms
};

}  // namespace qprof::fit
