#include "qprof/proc_parse.hpp"

#include <charconv>

namespace qprof::proc {
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
  if (!skip_fields(s, 9)) return std::nullopt;  // pgrp … cmajflt
  if (!next_number(s, st.utime_ticks) || !next_number(s, st.stime_ticks)) return std::nullopt;
  if (!skip_fields(s, 6)) return std::nullopt;  // cutime … itrealvalue
  if (!next_number(s, st.start_ticks)) return std::nullopt;
  return st;
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
