// SPDX-License-Identifier: Apache-2.0
#include "qprof/fit/probe_group.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <thread>

#include "qprof/common/clock.hpp"
#include "qprof/common/proc_file.hpp"

namespace qprof::fit {
using record::cgroup_procs_pids;
using record::TreeCgroup;
namespace {

using record::CgroupWrite;
using record::write_cgroup_file;

std::string read_text(const std::string& path) {
  std::string text;
  read_small_file(path, text);
  return text;
}

}  // namespace

bool evict_page_cache(const std::string& dir, bool v1, Bytes charge) {
  if (v1) return write_cgroup_file(dir + "/memory.force_empty", "0") == CgroupWrite::done;
  if (charge == 0) return true;
  // memory.reclaim fails with EAGAIN when it could not take back all it was asked; what it took
  // is gone all the same, and an empty group has nothing more to give.
  return write_cgroup_file(dir + "/memory.reclaim", std::to_string(charge)) == CgroupWrite::done;
}

bool kill_members(const std::string& dir) {
  write_cgroup_file(dir + "/cgroup.kill", "1");  // v2 from Linux 5.14: the whole group at once
  for (int round = 0; round < 200; ++round) {
    const auto pids = cgroup_procs_pids(read_text(dir + "/cgroup.procs"));
    if (pids.empty()) return true;
    for (pid_t pid : pids) ::kill(pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // they leave the group as they exit
  }
  return cgroup_procs_pids(read_text(dir + "/cgroup.procs")).empty();
}

std::optional<std::uint64_t> stat_value(std::string_view text, std::string_view key) {
  return record::keyed_value(text, key);  // the recording's reader of the same files
}

std::optional<Bytes> unreclaimable_bytes(std::string_view memory_stat, bool v1) {
  // The rule of the recorded figures (trace::CgroupSample): anon + shmem.
  const TreeCgroup::Parts p = record::memory_stat_parts(memory_stat, v1);
  return trace::CgroupSample{0, 0, 0, p.anon, p.file, p.shmem}.unreclaimable();
}

Result<std::unique_ptr<ProbeGroup>> ProbeGroup::create() {
  Result<std::unique_ptr<TreeCgroup>> group = TreeCgroup::create();
  if (!group) return group.failure();
  if (!(*group)->has_memory()) return Failure{(*group)->path() + " has no memory controller"};
  return std::unique_ptr<ProbeGroup>(new ProbeGroup(std::move(*group)));
}

double ProbeGroup::evict() {
  kill_all();
  const std::int64_t before = thread_cpu_ns();
  evict_page_cache(path(), is_v1(), charge().value_or(0));
  evicted_ = true;
  return static_cast<double>(thread_cpu_ns() - before) * 1e-9;
}

ProbeGroup::~ProbeGroup() {
  if (!evicted_) evict();
  // ~TreeCgroup removes the directory.
}

std::string ProbeGroup::memory_stat() const { return read_text(path() + "/memory.stat"); }

}  // namespace qprof::fit
