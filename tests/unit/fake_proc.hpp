// SPDX-License-Identifier: Apache-2.0
// A synthetic /proc tree in a temporary directory, for ProcTree and the probes: each process
// gets stat, statm, io and status files with the values a test chooses.
#pragma once

#include <sys/types.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace qprof::test {

struct FakeCounters {
  std::uint64_t utime = 3, stime = 4, cutime = 0, cstime = 0;  // clock ticks
  std::uint64_t read_bytes = 0, write_bytes = 0, rchar = 0, wchar = 0;
  std::uint64_t hwm_kib = 100;
  std::uint64_t minflt = 0;
};

class FakeProc {
 public:
  using Counters = FakeCounters;

  FakeProc()
      : root_(std::filesystem::temp_directory_path() /
              ("qprof-fakeproc-" + std::to_string(getpid()) + "-" + std::to_string(counter_++))) {
    std::filesystem::create_directories(root_);
    set_last_pid(1);
  }
  ~FakeProc() { std::filesystem::remove_all(root_); }
  std::string root() const { return root_.string(); }

  void add(pid_t pid, pid_t ppid, std::uint64_t start, std::uint64_t rss_pages = 10) {
    add(pid, ppid, start, rss_pages, Counters{});
  }
  void add(pid_t pid, pid_t ppid, std::uint64_t start, std::uint64_t rss_pages, const Counters& c) {
    std::filesystem::create_directories(dir(pid));
    write(pid, "statm", "100 " + std::to_string(rss_pages) + " 0 0 0 0 0\n");
    set_counters(pid, ppid, start, c);
  }
  // Rewrites the files in place: descriptors already open see the new values.
  void set_counters(pid_t pid, pid_t ppid, std::uint64_t start, const Counters& c) {
    write(pid, "stat",
          std::to_string(pid) + " (proc " + std::to_string(pid) + ") S " + std::to_string(ppid) + " 1 1 0 -1 0 " +
              std::to_string(c.minflt) + " 0 0 0 " + std::to_string(c.utime) + " " + std::to_string(c.stime) + " " +
              std::to_string(c.cutime) + " " + std::to_string(c.cstime) + " 20 0 1 0 " + std::to_string(start) +
              " 0 0\n");
    write(pid, "io",
          "rchar: " + std::to_string(c.rchar) + "\nwchar: " + std::to_string(c.wchar) +
              "\nsyscr: 0\nsyscw: 0\nread_bytes: " + std::to_string(c.read_bytes) +
              "\nwrite_bytes: " + std::to_string(c.write_bytes) + "\ncancelled_write_bytes: 0\n");
    write(pid, "status", "Name:\tproc\nVmHWM:\t" + std::to_string(c.hwm_kib) + " kB\nVmRSS:\t10 kB\n");
  }
  // The process exited and waits to be reaped: its counters still read, its memory is gone.
  void zombie(pid_t pid, pid_t ppid, std::uint64_t start, const Counters& c) {
    set_counters(pid, ppid, start, c);
    write(pid, "statm", "0 0 0 0 0 0 0\n");
    write(pid, "status", "Name:\tproc\nState:\tZ (zombie)\n");
  }
  // The process was reaped: its files read empty (as a reaped process's descriptors fail).
  void reap(pid_t pid) {
    for (const char* f : {"stat", "statm", "io", "status"}) write(pid, f, "");
  }
  void remove(pid_t pid) { std::filesystem::remove_all(dir(pid)); }
  void set_last_pid(pid_t pid) { std::ofstream(root_ / "loadavg") << "0.00 0.00 0.00 1/50 " << pid << "\n"; }

 private:
  std::filesystem::path dir(pid_t pid) const { return root_ / std::to_string(pid); }
  void write(pid_t pid, const char* file, const std::string& text) {
    std::ofstream out(dir(pid) / file, std::ios::trunc);
    out << text;
  }
  static inline int counter_ = 0;
  std::filesystem::path root_;
};

}  // namespace qprof::test
