#include "qprof/record/accounting.hpp"

#include <algorithm>
#include <string_view>

#include "qprof/common/proc_parse.hpp"

namespace qprof {
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
bool read_member(Member& m, double ticks_per_second) {
  char buf[1024];
  const auto stat = proc::parse_stat(read_into(m.stat, buf, sizeof buf));
  if (!stat) return false;
  m.cpu_seconds = static_cast<double>(stat->utime_ticks + stat->stime_ticks + stat->cutime_ticks + stat->cstime_ticks) /
                  ticks_per_second;
  if (const auto io = proc::parse_io(read_into(m.io, buf, sizeof buf))) {
    m.io_total.read_bytes = io->read_bytes;
    m.io_total.write_bytes = io->write_bytes;
    m.io_total.rchar = io->rchar;
    m.io_total.wchar = io->wchar;
  }
  char status[4096];
  if (const auto hwm = proc::parse_status_vmhwm(read_into(m.status, status, sizeof status))) {
    m.hwm = std::max(m.hwm, *hwm);
  }
  return true;
}

}  // namespace

TreeAccounting::TreeAccounting(double ticks_per_second) : ticks_per_second_(ticks_per_second) {}

const TreeAccounting::Totals& TreeAccounting::read(std::vector<Member>& members) {
  Totals now = reaped_;
  for (Member& m : members) {
    if (m.reaped_by_qprof) continue;  // already in reaped_
    if (!read_member(m, ticks_per_second_)) continue;  // gone: its parent holds it now
    add_io(now.io, m.io_total);
    now.cpu_seconds += m.cpu_seconds;
    now.hwm_sum += m.hwm;
  }
  keep_max(totals_.io, now.io);
  totals_.cpu_seconds = std::max(totals_.cpu_seconds, now.cpu_seconds);
  totals_.hwm_sum = std::max(totals_.hwm_sum, now.hwm_sum);
  return totals_;
}

void TreeAccounting::before_reap(Member& m) { read_member(m, ticks_per_second_); }

void TreeAccounting::after_reap(Member& m, const rusage& usage) {
  m.reaped_by_qprof = true;
  add_io(reaped_.io, m.io_total);
  reaped_.cpu_seconds += seconds(usage.ru_utime) + seconds(usage.ru_stime);
  // wait4's peak catches growth after the last VmHWM read. Not for the command itself: before
  // its exec it was a copy of qprof, and the kernel counts that copy's memory too.
  if (!m.is_root) m.hwm = std::max(m.hwm, static_cast<Bytes>(usage.ru_maxrss) * 1024);
}

void TreeAccounting::reaped_unseen(const IoSample& io, const rusage& usage) {
  add_io(reaped_.io, io);
  reaped_.cpu_seconds += seconds(usage.ru_utime) + seconds(usage.ru_stime);
  reaped_.hwm_sum += static_cast<Bytes>(usage.ru_maxrss) * 1024;
}

void TreeAccounting::left(const Member& m) { reaped_.hwm_sum += m.hwm; }

}  // namespace qprof
