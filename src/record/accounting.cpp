// SPDX-License-Identifier: Apache-2.0
#include "qprof/record/accounting.hpp"

#include <unistd.h>

#include <algorithm>
#include <string_view>

#include "qprof/common/proc_parse.hpp"

namespace qprof::record {
using trace::IoSample;

namespace {

std::string_view read_into(const ProcFile& f, char* buf, std::size_t cap) {
  const ssize_t n = f.read(buf, cap);
  return n > 0 ? std::string_view(buf, static_cast<std::size_t>(n)) : std::string_view();
}

void add_io(IoSample& into, const IoSample& more) {
  into.read_bytes += more.read_bytes;
  into.write_bytes += more.write_bytes;
  into.rchar += more.rchar;
  into.wchar += more.wchar;
}

void keep_max(IoSample& into, const IoSample& now) {
  into.read_bytes = std::max(into.read_bytes, now.read_bytes);
  into.write_bytes = std::max(into.write_bytes, now.write_bytes);
  into.rchar = std::max(into.rchar, now.rchar);
  into.wchar = std::max(into.wchar, now.wchar);
}

double seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6; }

// Reads one member's counters into it; false if the process is gone.
bool read_member(Member& m, double ticks_per_second, bool every_file = false) {
  char buf[1024];
  // schedstat first: a run after this reading shows at the next pass.
  constexpr std::uint32_t kIdleRefreshPasses = 10;
  const auto sched = m.threads == 1 ? proc::parse_schedstat(read_into(m.schedstat, buf, sizeof buf))
                                    : std::optional<proc::Schedstat>();
  const bool sched_known = sched && sched->run_ns != 0;  // "0 0 0": a kernel that does not keep them
  if (!every_file && sched_known && sched->run_ns == m.sched_run_ns && sched->runs == m.sched_runs &&
      ++m.idle_passes < kIdleRefreshPasses) {
    return true;  // not scheduled since: its figures stand
  }
  const auto stat = proc::parse_stat(read_into(m.stat, buf, sizeof buf));
  if (!stat) {
    m.usage = {};  // gone: it holds nothing
    return false;
  }
  m.threads = stat->num_threads;
  m.faults = stat->minflt + stat->majflt;
  m.sched_run_ns = sched_known ? sched->run_ns : 0;
  m.sched_runs = sched_known ? sched->runs : 0;
  m.idle_passes = 0;
  m.cpu_seconds = static_cast<double>(stat->utime_ticks + stat->stime_ticks + stat->cutime_ticks + stat->cstime_ticks) /
                  ticks_per_second;
  if (const auto io = proc::parse_io(read_into(m.io, buf, sizeof buf))) {
    m.io_total.read_bytes = io->read_bytes;
    m.io_total.write_bytes = io->write_bytes;
    m.io_total.rchar = io->rchar;
    m.io_total.wchar = io->wchar;
  }
  // VmHWM only if the process faulted since the last reading (or that was long ago): status
  // costs ≈ 2× stat and stat + io together, most of a stats pass over processes that sleep.
  constexpr std::uint32_t kHwmRefreshPasses = 10;
  const std::uint64_t faults = m.faults;
  if (!every_file && faults == m.faults_at_hwm && ++m.passes_since_hwm < kHwmRefreshPasses) return true;
  char status[4096];
  const std::string_view status_text = read_into(m.status, status, sizeof status);
  if (const auto hwm = proc::parse_status_vmhwm(status_text)) {
    m.hwm = std::max(m.hwm, *hwm);
    m.faults_at_hwm = faults;
    m.passes_since_hwm = 0;
  }
  // The same text: memory by kind, tasks. Between readings (a process that neither ran nor
  // faulted) the last figures stand: its anon and shmem cannot have grown, and page-cache
  // reclaim or swap-out of a sleeping process shows at the reading every kHwmRefreshPasses.
  m.usage = proc::parse_status_usage(status_text);
  return true;
}

}  // namespace

TreeAccounting::TreeAccounting(double ticks_per_second)
    : ticks_per_second_(ticks_per_second), page_size_(static_cast<Bytes>(::sysconf(_SC_PAGESIZE))) {}

const TreeAccounting::Totals& TreeAccounting::read(std::vector<Member>& members) {
  Totals now = reaped_;
  Bytes alive_hwm = 0;
  for (Member& m : members) {
    if (m.reaped_by_qprof) {
      // Its counters are in reaped_ already; its peak (wait4's) is final, and it was alive in
      // this window.
      alive_hwm += m.hwm;
      m.hwm_window = bound_.current();
      continue;
    }
    if (!read_member(m, ticks_per_second_)) continue;  // gone: its parent holds it now
    add_io(now.io, m.io_total);
    now.cpu_seconds += m.cpu_seconds;
    alive_hwm += m.hwm;
    m.hwm_window = bound_.current();
  }
  now.hwm_sum = bound_.close(alive_hwm);
  now.uncovered = pending_count_;
  now.cpu_seconds = std::max(0.0, now.cpu_seconds - before_.cpu_seconds);
  now.io.read_bytes -= std::min(now.io.read_bytes, before_.io.read_bytes);
  now.io.write_bytes -= std::min(now.io.write_bytes, before_.io.write_bytes);
  now.io.rchar -= std::min(now.io.rchar, before_.io.rchar);
  now.io.wchar -= std::min(now.io.wchar, before_.io.wchar);
  keep_max(totals_.io, now.io);
  totals_.cpu_seconds = std::max(totals_.cpu_seconds, now.cpu_seconds);
  totals_.hwm_sum = std::max(totals_.hwm_sum, now.hwm_sum);
  totals_.uncovered = now.uncovered;
  return totals_;
}

void TreeAccounting::count_from_now(std::vector<Member>& members) {
  before_ = Totals{};
  for (Member& m : members) {
    if (!read_member(m, ticks_per_second_, true)) continue;
    add_io(before_.io, m.io_total);
    before_.cpu_seconds += m.cpu_seconds;
  }
}

void TreeAccounting::before_reap(Member& m) {
  // Only the zombie's own count may later say that it did not grow after its last reading.
  m.faults = kUnknownFaults;
  read_member(m, ticks_per_second_, true);
}

std::optional<Bytes> TreeAccounting::largest_reaped_descendant(pid_t pid) const {
  std::optional<Bytes> largest;
  std::vector<pid_t> work{pid};
  while (!work.empty()) {
    const auto children = pending_.find(work.back());
    work.pop_back();
    if (children == pending_.end()) continue;
    for (const Pending& p : children->second) {
      largest = std::max(largest.value_or(0), p.hwm);
      work.push_back(p.pid);
    }
  }
  return largest;
}

Bytes TreeAccounting::own_peak(const Member& m, Bytes maxrss) const {
  // wait4's ru_maxrss is the larger of the process's own peak and those of the children it
  // reaped (RUSAGE_BOTH): counted as its own too, the largest child counts twice (a `sh -c`
  // wrapper, a parent that forks and waits). Its own peak is the last reading unless it grew
  // since, which takes page faults: the zombie's count says how many.
  const std::optional<Bytes> reaped = largest_reaped_descendant(m.pid);
  if (!reaped) return maxrss;  // no child of it was seen: the figure is its own
  if (m.faults == kUnknownFaults || m.faults_at_hwm == kUnknownFaults || m.faults < m.faults_at_hwm) return maxrss;
  const std::uint64_t faults = m.faults - m.faults_at_hwm;
  // Above every reaped descendant's reading, the figure may be the process's own late growth.
  if (faults > 0 && maxrss > *reaped) return maxrss;
  // Else the figure is a descendant's (it counts with it as its cap); the process's own growth
  // since its reading is taken as a page a fault, the most a fault maps outside huge pages and
  // fault-around.
  return std::min(maxrss, m.hwm + static_cast<Bytes>(faults) * page_size_);
}

void TreeAccounting::after_reap(Member& m, const rusage& usage) {
  m.reaped_by_qprof = true;
  add_io(reaped_.io, m.io_total);
  reaped_.cpu_seconds += seconds(usage.ru_utime) + seconds(usage.ru_stime);
  // wait4's peak catches growth after the last VmHWM read. The command's own figure also counts
  // its pre-exec copy of qprof: too high perhaps, never too low, which is what a bound needs.
  const Bytes maxrss = static_cast<Bytes>(usage.ru_maxrss) * 1024;
  m.hwm = std::max(m.hwm, own_peak(m, maxrss));
  add_cap(m.pid, maxrss);
}

void TreeAccounting::reaped_unseen(const IoSample& io, const rusage& usage) {
  add_io(reaped_.io, io);
  reaped_.cpu_seconds += seconds(usage.ru_utime) + seconds(usage.ru_stime);
  bound_.departed(HwmBound::kNever, static_cast<Bytes>(usage.ru_maxrss) * 1024);
}

void TreeAccounting::left(const Member& m) {
  // It counts in the windows after its last reading (that reading covered the ones before).
  const HwmBound::Window from = m.hwm_window == HwmBound::kNever ? HwmBound::kNever : m.hwm_window + 1;
  if (m.reaped_by_qprof) {
    bound_.departed(from, m.hwm);
    return;
  }
  const Pending p{m.pid, m.ppid, m.hwm, bound_.departed_pending(from, m.hwm)};
  if (const auto cap = caps_.find(m.ppid); cap != caps_.end()) {
    // Its parent was reaped already: covered at once.
    const Bytes c = cap->second;
    bound_.settle(p.windows, c > p.hwm ? c - p.hwm : 0);
    if (c > p.hwm) ++totals_.capped;
    add_cap(p.pid, c);
    return;
  }
  pending_[m.ppid].push_back(p);
  totals_.uncovered = ++pending_count_;
}

void TreeAccounting::close(const std::vector<Member>& members) {
  Bytes alive_hwm = 0;
  for (const Member& m : members) alive_hwm += m.hwm;
  totals_.hwm_sum = std::max(totals_.hwm_sum, bound_.close(alive_hwm));
}

void TreeAccounting::add_cap(pid_t pid, Bytes maxrss) {
  std::vector<std::pair<pid_t, Bytes>> work{{pid, maxrss}};
  while (!work.empty()) {
    const auto [who, cap] = work.back();
    work.pop_back();
    caps_[who] = cap;
    cap_order_.push_back(who);
    constexpr std::size_t kKeep = 4096;
    while (cap_order_.size() > kKeep) {
      caps_.erase(cap_order_.front());
      cap_order_.pop_front();
    }
    const auto children = pending_.find(who);
    if (children == pending_.end()) continue;
    // The ancestor's figure covers this process's descendants too: it becomes their cap.
    for (const Pending& p : children->second) {
      bound_.settle(p.windows, cap > p.hwm ? cap - p.hwm : 0);
      if (cap > p.hwm) ++totals_.capped;
      work.emplace_back(p.pid, cap);
    }
    pending_count_ -= children->second.size();
    pending_.erase(children);
  }
  totals_.uncovered = pending_count_;
}

}  // namespace qprof::record
