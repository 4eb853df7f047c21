// SPDX-License-Identifier: Apache-2.0
#include "qprof/common/proc_parse.hpp"

#include <charconv>

namespace qprof::proc {

bool parse_pid(std::string_view text, pid_t& pid) {
  if (text.empty() || text.front() < '1' || text.front() > '9') return false;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), pid);
  return r.ec == std::errc() && r.ptr == text.data() + text.size();
}

namespace {

// Skips spaces, then parses one unsigned number; advances `s` past it.
template <typename T>
bool next_number(std::string_view& s, T& out) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n')) s.remove_prefix(1);
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  if (r.ec != std::errc()) return false;
  s.remove_prefix(static_cast<std::size_t>(r.ptr - s.data()));
  return true;
}

// Calls on_field(key, value) for "key: value [kB]" lines; value in the file's unit.
template <typename F>
void for_each_key_value(std::string_view text, F&& on_field) {
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view rest = line.substr(colon + 1);
    std::uint64_t value = 0;
    if (next_number(rest, value)) on_field(line.substr(0, colon), value);
  }
}

bool skip_fields(std::string_view& s, int n) {
  for (int i = 0; i < n; ++i) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    const std::size_t end = s.find(' ');
    if (end == std::string_view::npos) return false;
    s.remove_prefix(end);
  }
  return true;
}

}  // namespace

std::optional<std::uint64_t> parse_statm_resident_pages(std::string_view text) {
  std::uint64_t size = 0, resident = 0;
  if (!next_number(text, size) || !next_number(text, resident)) return std::nullopt;
  return resident;
}

std::optional<Stat> parse_stat(std::string_view text) {
  // "pid (comm) state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime
  //  stime cutime cstime priority nice num_threads itrealvalue starttime …"
  const std::size_t close = text.rfind(')');
  if (close == std::string_view::npos) return std::nullopt;
  std::string_view s = text.substr(close + 1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  Stat st;
  st.state = s.front();
  s.remove_prefix(1);
  if (!next_number(s, st.ppid)) return std::nullopt;
  if (!skip_fields(s, 5)) return std::nullopt;  // pgrp session tty_nr tpgid flags
  std::uint64_t cminflt = 0, cmajflt = 0;
  if (!next_number(s, st.minflt) || !next_number(s, cminflt) || !next_number(s, st.majflt) ||
      !next_number(s, cmajflt)) {
    return std::nullopt;
  }
  if (!next_number(s, st.utime_ticks) || !next_number(s, st.stime_ticks)) return std::nullopt;
  std::int64_t cutime = 0, cstime = 0;  // signed in the kernel's format
  if (!next_number(s, cutime) || !next_number(s, cstime)) return std::nullopt;
  st.cutime_ticks = cutime > 0 ? static_cast<std::uint64_t>(cutime) : 0;
  st.cstime_ticks = cstime > 0 ? static_cast<std::uint64_t>(cstime) : 0;
  if (!skip_fields(s, 2)) return std::nullopt;  // priority nice
  if (!next_number(s, st.num_threads)) return std::nullopt;
  if (!skip_fields(s, 1)) return std::nullopt;  // itrealvalue
  if (!next_number(s, st.start_ticks)) return std::nullopt;
  return st;
}

std::optional<Schedstat> parse_schedstat(std::string_view text) {
  Schedstat st;
  if (!next_number(text, st.run_ns) || !next_number(text, st.wait_ns) || !next_number(text, st.runs))
    return std::nullopt;
  return st;
}

std::optional<Io> parse_io(std::string_view text) {
  Io io;
  int seen = 0;
  for_each_key_value(text, [&](std::string_view key, std::uint64_t v) {
    if (key == "rchar")
      io.rchar = v, seen |= 1;
    else if (key == "wchar")
      io.wchar = v, seen |= 2;
    else if (key == "read_bytes")
      io.read_bytes = v, seen |= 4;
    else if (key == "write_bytes")
      io.write_bytes = v, seen |= 8;
    else if (key == "cancelled_write_bytes")
      io.cancelled_write_bytes = v;
  });
  if (seen != 15) return std::nullopt;
  return io;
}

std::optional<std::uint64_t> parse_status_vmhwm(std::string_view text) {
  std::optional<std::uint64_t> hwm;
  for_each_key_value(text, [&](std::string_view key, std::uint64_t kib) {
    if (key == "VmHWM") hwm = kib * 1024;
  });
  return hwm;
}

std::optional<Rollup> parse_smaps_rollup(std::string_view text) {
  Rollup r;
  int seen = 0;
  std::uint64_t ksm = 0;
  for_each_key_value(text, [&](std::string_view key, std::uint64_t kib) {
    if (key == "Rss")
      r.rss = kib * 1024, seen |= 1;
    else if (key == "Pss")
      r.pss = kib * 1024, seen |= 2;
    else if (key == "Private_Clean" || key == "Private_Dirty" || key == "Private_Hugetlb")
      r.uss += kib * 1024;
    else if (key == "Pss_Anon" || key == "Pss_Shmem")
      r.pss_unreclaimable += kib * 1024, r.has_split = true;
    if (key == "Pss_Anon")
      r.pss_anon = kib * 1024;
    else if (key == "Pss_Shmem")
      r.pss_shmem = kib * 1024;
    else if (key == "Anonymous")
      r.anon = kib * 1024;
    else if (key == "KSM")
      ksm = kib * 1024;
  });
  if (seen != 3) return std::nullopt;
  r.anon = r.anon > ksm ? r.anon - ksm : 0;
  return r;
}

std::optional<std::int64_t> parse_loadavg_last_pid(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  const std::size_t sp = text.rfind(' ');
  if (sp == std::string_view::npos) return std::nullopt;
  std::string_view last = text.substr(sp + 1);
  std::int64_t pid = 0;
  auto r = std::from_chars(last.data(), last.data() + last.size(), pid);
  if (r.ec != std::errc() || r.ptr != last.data() + last.size()) return std::nullopt;
  return pid;
}

}  // namespace qprof::proc
