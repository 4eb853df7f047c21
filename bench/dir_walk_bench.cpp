// SPDX-License-Identifier: Apache-2.0
// The cost of one --watch-dir walk per file: `qprof_dir_walk_bench FILES [DIR]` makes a tree of
// FILES one-byte files (1000 per directory) under DIR (default: a new directory in $TMPDIR),
// walks it once to warm the caches and then 5 times, and prints the thread CPU time and the wall
// time per walk and per entry. The tree is removed afterwards unless DIR was given.
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "qprof/record/dir_walk.hpp"

namespace {

double thread_cpu_s() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: qprof_dir_walk_bench FILES [DIR]\n");
    return 2;
  }
  const long files = std::atol(argv[1]);
  namespace fs = std::filesystem;
  const bool keep = argc > 2;
  const fs::path root =
      keep ? fs::path(argv[2]) : fs::temp_directory_path() / ("qprof-walk-bench-" + std::to_string(getpid()));
  if (!fs::exists(root / "done")) {
    for (long i = 0; i < files; ++i) {
      const fs::path dir = root / ("d" + std::to_string(i / 1000));
      if (i % 1000 == 0) fs::create_directories(dir);
      const int fd = ::open((dir / ("f" + std::to_string(i % 1000))).c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
      if (fd < 0 || ::write(fd, "x", 1) != 1) return 1;
      ::close(fd);
    }
    ::close(::open((root / "done").c_str(), O_CREAT | O_WRONLY | O_CLOEXEC, 0644));
  }
  qprof::record::walk_dir(root.string());  // warm the dentry and inode caches, as a watched tree is
  std::vector<double> cpu, wall;
  qprof::record::DirSize last;
  for (int k = 0; k < 5; ++k) {
    const double c0 = thread_cpu_s();
    const auto w0 = std::chrono::steady_clock::now();
    last = qprof::record::walk_dir(root.string());
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count());
    cpu.push_back(thread_cpu_s() - c0);
  }
  std::sort(cpu.begin(), cpu.end());
  std::sort(wall.begin(), wall.end());
  const double n = static_cast<double>(last.entries);
  std::printf("entries %llu  apparent %llu B\n", static_cast<unsigned long long>(last.entries),
              static_cast<unsigned long long>(last.apparent));
  std::printf("walk CPU  median %.1f ms (min %.1f, max %.1f)  = %.0f ns/entry\n", cpu[2] * 1e3, cpu[0] * 1e3,
              cpu[4] * 1e3, cpu[2] / n * 1e9);
  std::printf("walk wall median %.1f ms (min %.1f, max %.1f)  = %.0f ns/entry\n", wall[2] * 1e3, wall[0] * 1e3,
              wall[4] * 1e3, wall[2] / n * 1e9);
  std::printf("at 2 %% of a core: one walk every %.1f s\n", cpu[2] / 0.02);
  if (!keep) fs::remove_all(root);
  return 0;
}
