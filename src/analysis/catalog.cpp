// SPDX-License-Identifier: Apache-2.0
#include "qprof/analysis/catalog.hpp"

#include <time.h>  // strptime

#include <algorithm>
#include <cctype>
#include <ctime>
#include <filesystem>
#include <optional>

#include "qprof/trace/footprint.hpp"
#include "qprof/trace/format.hpp"

namespace qprof::analysis {
using trace::ExitInfo;
using trace::MemSample;
using trace::TraceMeta;

namespace {

bool digits(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

// Where the YYYYMMDDhhmmss of a default name starts: right after "qprof_" or "mprofile_", or,
// for a rank's trace, after "qprof_HOST.rRANK_" (the host may hold anything but '/').
std::optional<std::size_t> stamp_offset(std::string_view name) {
  std::size_t from;
  if (name.starts_with("qprof_"))
    from = 6;
  else if (name.starts_with("mprofile_"))
    from = 9;
  else
    return std::nullopt;
  const auto stamp_at = [&](std::size_t p) { return p + 14 + 4 <= name.size() && digits(name.substr(p, 14)); };
  if (stamp_at(from)) return from;
  if (name.starts_with("mprofile_")) return std::nullopt;
  for (std::size_t us = name.find('_', from); us != std::string_view::npos; us = name.find('_', us + 1)) {
    // "….rRANK" before this '_'
    const std::string_view head = name.substr(from, us - from);
    const std::size_t r = head.rfind(".r");
    if (r == std::string_view::npos || r + 2 == head.size() || !digits(head.substr(r + 2))) continue;
    if (stamp_at(us + 1)) return us + 1;
  }
  return std::nullopt;
}

// The YYYYMMDDhhmmss of a default name.
std::string_view stamp(std::string_view name) { return name.substr(stamp_offset(name).value_or(0), 14); }

class Summarizer : public trace::Visitor {
 public:
  explicit Summarizer(TraceListing& l) : l_(l) {}
  void header(const TraceMeta& m) override {
    l_.start = m.start;
    watch_.header(m);
  }
  void cmdline(std::string_view c) override {
    l_.command = std::string(c);
    watch_.cmdline_at(line());
  }
  void warning(const std::string&) override { watch_.cut_at(line()); }
  void mem(const MemSample& s) override {
    watch_.mem(s.t, line());
    if (!l_.start) l_.start = s.t;
    l_.peak = std::max(l_.peak.value_or(0), s.bytes);
    end_ = std::max(end_, s.t);
  }
  // The footprint as footprint_of finds it, from the few records it looks at: the highest
  // charge and high-water mark, the kernel's PEAK cgroup line, the highest Σ PSS.
  void cgroup(const trace::CgroupSample& s) override {
    if (kept_.cgroup.empty()) kept_.cgroup.resize(2, s);
    if (s.usage > kept_.cgroup[0].usage) kept_.cgroup[0] = s;
    if (s.peak > kept_.cgroup[1].peak) kept_.cgroup[1] = s;
  }
  void peak(std::string_view name, Bytes b) override {
    if (name == trace::kPeakCgroup) kept_.peaks[std::string(name)] = b;
  }
  void pss(const trace::PssSample& s) override {
    if (kept_.pss.empty() || s.pss > kept_.pss.front().pss) kept_.pss.assign(1, s);
  }
  void exit(const ExitInfo& e) override {
    end_ = std::max(end_, e.t);
    watch_.exit();
  }
  void finish() {
    l_.completeness = watch_.seen();
    if (l_.start && end_ > *l_.start) l_.duration = end_ - *l_.start;
    if (const auto f = trace::footprint_of(kept_)) l_.footprint = f->peak;
  }

 private:
  TraceListing& l_;
  trace::CompletenessWatch watch_;  // what every reader says of a trace: list says it too
  Seconds end_ = 0;
  trace::Trace kept_;
};

}  // namespace

std::optional<Seconds> name_start_time(std::string_view name) {
  if (!is_default_trace_name(name)) return std::nullopt;
  const std::string s(stamp(name));
  std::tm tm{};
  if (const char* end = ::strptime(s.c_str(), "%Y%m%d%H%M%S", &tm); end == nullptr || *end != '\0') {
    return std::nullopt;
  }
  tm.tm_isdst = -1;  // as the clock was then: the local time of a date in summer or winter
  const std::tm asked = tm;
  const std::time_t t = std::mktime(&tm);
  // strptime refuses a field out of its range (month 13, minute 60); mktime carries a day the month
  // lacks (31 February) into the next: no such date either. The hour is not compared: an hour
  // skipped when summer time begins moves on by one.
  if (t == static_cast<std::time_t>(-1) || tm.tm_year != asked.tm_year || tm.tm_mon != asked.tm_mon ||
      tm.tm_mday != asked.tm_mday || tm.tm_min != asked.tm_min || tm.tm_sec != asked.tm_sec) {
    return std::nullopt;
  }
  return static_cast<Seconds>(t);
}

bool is_default_trace_name(std::string_view name) {
  const auto at = stamp_offset(name);
  if (!at || !name.ends_with(".dat")) return false;
  // mprof's names end right after the time; qprof's carry milliseconds and the PID after it.
  return name.starts_with("qprof_") || name.size() == *at + 14 + 4;
}

std::vector<std::string> default_traces(const std::string& dir) {
  std::vector<std::pair<std::string, std::string>> found;  // (file name, path)
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    std::error_code ec;
    if (is_default_trace_name(name) && e.is_regular_file(ec)) found.emplace_back(name, e.path().string());
  }
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) {
    const auto sa = stamp(a.first), sb = stamp(b.first);
    return sa != sb ? sa < sb : a.first < b.first;
  });
  std::vector<std::string> paths;
  for (auto& f : found) paths.push_back(std::move(f.second));
  return paths;
}

TraceListing summarize_trace(const std::string& path) {
  TraceListing l;
  l.path = path;
  Summarizer s(l);
  trace::parse_file(path, s);
  s.finish();
  return l;
}

}  // namespace qprof::analysis
